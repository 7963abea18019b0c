// Slow, obvious versions of qk/util/path_within.hpp and the special-name rule, written from their
// definitions by splitting on '/', for test_path_within.cpp and tests/fuzz/fuzz_path_within.cpp to
// hold the fast ones to. Nothing here shares code with what it checks.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace qk_reference {

struct Split {
    bool absolute = false;
    std::vector<std::string> parts;  // "" and "/" have none; "a/" has "a" and ""
};

inline Split split(std::string_view path)
{
    Split out;
    if (!path.empty() && path.front() == '/') {
        out.absolute = true;
        path.remove_prefix(1);
    }
    if (path.empty())
        return out;
    std::string part;
    for (char c : path) {
        if (c == '/') {
            out.parts.push_back(part);
            part.clear();
        } else {
            part += c;
        }
    }
    out.parts.push_back(part);
    return out;
}

// `path` lies under `dir`: both absolute or both relative, and dir's components a proper prefix of path's.
inline bool is_under(std::string_view path, std::string_view dir)
{
    Split p = split(path), d = split(dir);
    if (p.absolute != d.absolute || p.parts.size() <= d.parts.size())
        return false;
    for (std::size_t i = 0; i < d.parts.size(); ++i)
        if (p.parts[i] != d.parts[i])
            return false;
    return true;
}

inline bool is_plain_relative(std::string_view path)
{
    if (path.empty() || path.front() == '/')
        return false;
    for (const std::string& part : split(path).parts)
        if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string::npos)
            return false;
    return true;
}

inline std::string lower(std::string s)
{
    for (char& c : s)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return s;
}

// The special tree of a workspace-relative path, as the spec says it: .qk as the first component, else
// .git anywhere, else node_modules anywhere; names matched whatever their ASCII case. 0 none, 1 git,
// 2 qk, 3 node_modules (qk::SpecialDir's order).
inline int special_tree(std::string_view path)
{
    auto parts = split(path).parts;
    if (!parts.empty() && lower(parts[0]) == ".qk")
        return 2;
    int found = 0;
    for (const std::string& p : parts) {
        if (lower(p) == ".git")
            return 1;
        if (lower(p) == "node_modules")
            found = 3;
    }
    return found;
}

}  // namespace qk_reference
