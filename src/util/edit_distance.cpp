#include "qk/util/edit_distance.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace qk {

std::size_t edit_distance(std::string_view a, std::string_view b)
{
    // Three rows of the dynamic programme: the one before the previous serves the transposition.
    std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        previous[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                current[j] = std::min(current[j], before[j - 2] + 1);
        }
        std::swap(before, previous);
        std::swap(previous, current);
    }
    return previous[b.size()];
}

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t limit)
{
    // Within max(2, size/3), and fewer edits than the name has bytes: replacing all of it is no typo.
    std::size_t best = std::max<std::size_t>(2, name.size() / 3);
    if (best >= name.size())
        best = name.empty() ? 0 : name.size() - 1;
    std::vector<std::string> out;
    for (const std::string& c : candidates) {
        if (c == name)
            continue;
        std::size_t d = edit_distance(name, c);
        if (d > best)
            continue;
        if (d < best)
            out.clear();
        best = d;
        out.push_back(c);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.size() > limit)
        out.resize(limit);
    return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates)
{
    std::vector<std::string> near = closest_names(name, candidates);
    if (near.empty())
        return {};
    std::string out = " (did you mean ";
    for (std::size_t i = 0; i < near.size(); ++i) {
        if (i > 0)
            out += i + 1 == near.size() ? " or " : ", ";
        out += fmt::format("\"{}\"", near[i]);
    }
    return out + "?)";
}

}  // namespace qk
