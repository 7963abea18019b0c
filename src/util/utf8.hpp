// Reading UTF-8 one sequence at a time, for the two escapers that must tell a character from a stray
// byte (the JSON writer, printable). Private to src/util.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace qk::utf8 {

// Length of the valid UTF-8 sequence at s[i] (1 for ASCII), or 0 if it is not one; its code point in
// `*cp` when valid. Overlong forms, surrogates, values past U+10FFFF and a sequence cut short are not
// valid: a name made of them can only be told apart byte by byte.
inline std::size_t sequence(std::string_view s, std::size_t i, char32_t* cp = nullptr)
{
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = byte(i);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size())
        return 0;
    for (std::size_t k = 1; k < n; k++)
        if ((byte(i + k) & 0xc0) != 0x80)
            return 0;
    std::uint32_t v = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
    for (std::size_t k = 1; k < n; k++)
        v = (v << 6) | (byte(i + k) & 0x3f);
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < kMin[n] || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
        return 0;
    if (cp)
        *cp = static_cast<char32_t>(v);
    return n;
}

}  // namespace qk::utf8
