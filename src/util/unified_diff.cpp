// unified_diff (qk/util/unified_diff.hpp): the lines both texts share at their start and end are context,
// what lies between is one hunk. The edits qk makes are insertions close together in a file, for which
// that is the diff a person would write.
#include "qk/util/unified_diff.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace qk {

namespace {

std::vector<std::string_view> lines_of(std::string_view text)
{
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        std::size_t end = text.find('\n');
        lines.push_back(text.substr(0, end));
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    return lines;
}

// "start,count" as a hunk header gives it: an empty range names the line before it.
std::string range(std::size_t first, std::size_t count)
{
    return fmt::format("{},{}", count == 0 ? first : first + 1, count);
}

}  // namespace

std::string unified_diff(std::string_view before, std::string_view after, std::string_view path)
{
    if (before == after)
        return {};
    constexpr std::size_t kContext = 3;
    auto a = lines_of(before), b = lines_of(after);
    std::size_t head = 0;
    while (head < a.size() && head < b.size() && a[head] == b[head])
        ++head;
    std::size_t tail = 0;
    while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail])
        ++tail;
    std::size_t from = head - std::min(head, kContext);
    std::size_t a_end = a.size() - tail + std::min(tail, kContext), b_end = b.size() - tail + std::min(tail, kContext);
    std::string out = fmt::format("--- a/{}\n+++ b/{}\n@@ -{} +{} @@\n", path, path, range(from, a_end - from),
                                  range(from, b_end - from));
    for (std::size_t i = from; i < head; ++i)
        out += fmt::format(" {}\n", a[i]);
    for (std::size_t i = head; i < a.size() - tail; ++i)
        out += fmt::format("-{}\n", a[i]);
    for (std::size_t i = head; i < b.size() - tail; ++i)
        out += fmt::format("+{}\n", b[i]);
    for (std::size_t i = a.size() - tail; i < a_end; ++i)
        out += fmt::format(" {}\n", a[i]);
    return out;
}

}  // namespace qk
