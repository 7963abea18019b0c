// Whether one path lies inside another, by their text: the one containment test for paths qk compares
// (absolute ones, or workspace-relative ones where "" is the root), and the one test that a
// workspace-relative path stays inside the workspace. Nothing is resolved: callers of is_under pass
// paths they made canonical (no ".", "..", repeated or trailing "/"), and is_plain_relative refuses
// anything else. tests/unit/test_path_within.cpp holds them to a reference; tests/fuzz/fuzz_path_within.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace qk {

// `path` is `prefix` followed by '/' and more: the text test beneath is_under, with no rule for a
// root. For text that is not a canonical path, such as a glob's literal prefix, where "" stands for a
// leading '/' ("/x" continues "", "x" does not).
constexpr bool continues_by_component(std::string_view path, std::string_view prefix)
{
    return path.size() > prefix.size() && path[prefix.size()] == '/' && path.starts_with(prefix);
}

// `path` lies strictly beneath `dir`: "/a/b" under "/a" and under "/", "a/b" under "a" and under "".
// Not "a/bc" under "a/b": components are whole.
constexpr bool is_under(std::string_view path, std::string_view dir)
{
    if (dir.empty())
        return !path.empty() && path.front() != '/';
    if (dir == "/")
        return path.size() > 1 && path.front() == '/';
    return continues_by_component(path, dir);
}

// `path` is `dir` or lies beneath it.
constexpr bool is_within(std::string_view path, std::string_view dir)
{
    return path == dir || is_under(path, dir);
}

// What follows `dir` in a `path` under it ("c" for "a/b/c" under "a/b", "a/b" under "", "a" for "/a"
// under "/"), or nothing when it is not under it: the two together, so that no caller cuts a prefix
// of the wrong length off the root.
constexpr std::optional<std::string_view> relative_under(std::string_view path, std::string_view dir)
{
    if (!is_under(path, dir))
        return std::nullopt;
    return dir.empty() ? path : path.substr(dir == "/" ? 1 : dir.size() + 1);
}

// A workspace-relative path that names something inside the workspace however it is joined to the
// root: not empty (the root itself), not absolute, no "." or ".." component, no empty component (a
// leading, repeated or trailing '/'), no NUL (the kernel would read a shorter path than the one
// checked). The only paths qk writes at when it restores outputs from the cache or applies a task's
// upper layer, which come from files on disk that anyone may have edited.
constexpr bool is_plain_relative(std::string_view path)
{
    if (path.empty() || path.find('\0') != std::string_view::npos)
        return false;
    for (std::size_t start = 0;;) {
        const std::size_t slash = path.find('/', start);
        const std::string_view part = path.substr(start, slash - start);  // npos - start: to the end
        if (part.empty() || part == "." || part == "..")
            return false;
        if (slash == std::string_view::npos)
            return true;
        start = slash + 1;
    }
}

// "a/b/c" -> {"a", "b", "c"}, by text: empty components (a leading, doubled or trailing '/') are skipped,
// "." and ".." kept as they are.
inline std::vector<std::string_view> path_components(std::string_view path)
{
    std::vector<std::string_view> parts;
    while (!path.empty()) {
        const auto slash = path.find('/');
        const std::string_view part = path.substr(0, slash);
        if (!part.empty())
            parts.push_back(part);
        if (slash == std::string_view::npos)
            break;
        path.remove_prefix(slash + 1);
    }
    return parts;
}

}  // namespace qk
