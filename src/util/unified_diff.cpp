// unified_diff (qk/util/unified_diff.hpp): the lines both texts share at their start and end are
// context; between them, the longest run of lines both keep in order (a table of common subsequences)
// says which lines were removed and which added, so two edits far apart in one file (sharedGlobals and a
// targetDefaults entry in nx.json) are two hunks, not the whole stretch between them removed and added
// again. Configuration files are small; past kMaxCells a change is one hunk, as the table would be large.
#include "qk/util/unified_diff.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

namespace qk {

namespace {

constexpr std::size_t kContext = 3;
constexpr std::size_t kMaxCells = std::size_t{1} << 24;

// Each line with its '\n': a last line without one differs from the same text with one, as diff -u and
// git apply see it ("\ No newline at end of file").
std::vector<std::string_view> lines_of(std::string_view text)
{
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        std::size_t end = text.find('\n');
        end = end == std::string_view::npos ? text.size() : end + 1;
        lines.push_back(text.substr(0, end));
        text.remove_prefix(end);
    }
    return lines;
}

// "start,count" as a hunk header gives it: an empty range names the line before it.
std::string range(std::size_t first, std::size_t count)
{
    return fmt::format("{},{}", count == 0 ? first : first + 1, count);
}

// One line of the diff: ' ' kept, '-' removed, '+' added; a_line and b_line are the lines of each text
// at this point (0-based).
struct Op {
    char kind;
    std::string_view text;
    std::size_t a_line, b_line;
};

// a[from, a_end) and b[from, b_end) as removals and additions around what both keep, removals first.
void diff_middle(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b, std::size_t from,
                 std::size_t a_end, std::size_t b_end, std::vector<Op>& out)
{
    const std::size_t n = a_end - from, m = b_end - from;
    if (n * m > kMaxCells || n == 0 || m == 0) {
        for (std::size_t i = 0; i < n; ++i)
            out.push_back({'-', a[from + i], from + i, from});
        for (std::size_t j = 0; j < m; ++j)
            out.push_back({'+', b[from + j], from + n, from + j});
        return;
    }
    // common[i][j]: how many lines a[i..] and b[j..] keep in common, in order.
    std::vector<std::uint32_t> common((n + 1) * (m + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return common[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            at(i, j) = a[from + i] == b[from + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[from + i] == b[from + j]) {
            out.push_back({' ', a[from + i], from + i, from + j});
            ++i, ++j;
        } else if (j == m || (i < n && at(i + 1, j) >= at(i, j + 1))) {
            out.push_back({'-', a[from + i], from + i, from + j});
            ++i;
        } else {
            out.push_back({'+', b[from + j], from + i, from + j});
            ++j;
        }
    }
}

}  // namespace

std::string unified_diff(std::string_view before, std::string_view after, std::string_view path)
{
    if (before == after)
        return {};
    auto a = lines_of(before), b = lines_of(after);
    std::size_t head = 0;
    while (head < a.size() && head < b.size() && a[head] == b[head])
        ++head;
    std::size_t tail = 0;
    while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail])
        ++tail;
    std::vector<Op> ops;
    for (std::size_t i = 0; i < head; ++i)
        ops.push_back({' ', a[i], i, i});
    diff_middle(a, b, head, a.size() - tail, b.size() - tail, ops);
    for (std::size_t k = tail; k > 0; --k)
        ops.push_back({' ', a[a.size() - k], a.size() - k, b.size() - k});

    std::string out = fmt::format("--- a/{}\n+++ b/{}\n", path, path);
    // Hunks: the changes with kContext kept lines each side, two joined where their context meets.
    for (std::size_t k = 0; k < ops.size();) {
        if (ops[k].kind == ' ') {
            ++k;
            continue;
        }
        const std::size_t first = k - std::min(k, kContext);
        std::size_t last = k;  // the last change of the hunk
        for (std::size_t next = k + 1; next < ops.size(); ++next)
            if (ops[next].kind != ' ') {
                if (next - last > 2 * kContext + 1)
                    break;
                last = next;
            }
        const std::size_t end = std::min(ops.size(), last + 1 + kContext);
        std::size_t a_count = 0, b_count = 0;
        for (std::size_t h = first; h < end; ++h) {
            a_count += ops[h].kind != '+';
            b_count += ops[h].kind != '-';
        }
        out += fmt::format("@@ -{} +{} @@\n", range(ops[first].a_line, a_count), range(ops[first].b_line, b_count));
        for (std::size_t h = first; h < end; ++h) {
            out += ops[h].kind;
            out += ops[h].text;
            if (!ops[h].text.ends_with('\n'))
                out += "\n\\ No newline at end of file\n";
        }
        k = end;
    }
    return out;
}

}  // namespace qk
