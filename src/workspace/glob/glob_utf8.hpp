// UTF-8 steps for the glob matcher: `?` and classes take one character, not one byte. A byte that does not
// start a valid sequence counts as one character of its own value, so any byte string can be matched.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

namespace qk::workspace::glob_detail {

inline std::pair<char32_t, size_t> utf8_decode(std::string_view s, size_t i)
{
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80)
        return {b, 1};
    size_t len = b >= 0xF0 ? (b < 0xF5 ? 4 : 0) : b >= 0xE0 ? 3 : b >= 0xC2 ? 2 : 0;
    if (len == 0 || i + len > s.size())
        return {b, 1};
    char32_t c = b & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
        auto cb = static_cast<unsigned char>(s[i + k]);
        if ((cb & 0xC0) != 0x80)
            return {b, 1};
        c = (c << 6) | (cb & 0x3F);
    }
    return {c, len};
}

inline size_t utf8_length(std::string_view s, size_t i)
{
    if (i >= s.size())
        return 1;
    return static_cast<unsigned char>(s[i]) < 0x80 ? 1 : utf8_decode(s, i).second;
}

}  // namespace qk::workspace::glob_detail
