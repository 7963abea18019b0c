// Hash sets and maps of strings that look up by std::string_view without building a std::string: the
// rules and the recorder judge millions of paths a second and must not allocate for each.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace qk {

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

using StringSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;
template <class T>
using StringMap = std::unordered_map<std::string, T, StringHash, std::equal_to<>>;

}  // namespace qk
