// Whether one path lies inside another, by their text: the one containment test for paths qk compares
// (absolute ones, or workspace-relative ones where "" is the root). Neither path is resolved: callers
// pass paths they made canonical (no ".", "..", repeated or trailing "/").
#pragma once

#include <string_view>

namespace qk {

// `path` lies strictly beneath `dir`: "/a/b" under "/a" and under "/", "a/b" under "a" and under "".
constexpr bool is_under(std::string_view path, std::string_view dir)
{
    if (dir.empty())
        return !path.empty() && path.front() != '/';
    if (dir == "/")
        return path.size() > 1 && path.front() == '/';
    return path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/';
}

// `path` is `dir` or lies beneath it.
constexpr bool is_within(std::string_view path, std::string_view dir)
{
    return path == dir || is_under(path, dir);
}

}  // namespace qk
