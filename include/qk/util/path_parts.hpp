// A path's parent and last name, by text: the one split of a path at its last '/', for the components
// that walk or rebuild trees by relative path (enforce applying an upper layer, the cache restoring
// outputs, a suggestion naming an output's directory). Nothing is resolved; see path_within.hpp for
// whether one path lies in another.
#pragma once

#include <string_view>

namespace qk {

// The directory part of a path: "a/b" for "a/b/c", "" for a top-level name ("" is the workspace root
// for a relative path). For an absolute path at the top ("/a") it is "" as well, not "/".
constexpr std::string_view parent_of(std::string_view path)
{
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

// The last component: "c" for "a/b/c", the path itself when it has no '/'.
constexpr std::string_view name_of(std::string_view path)
{
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace qk
