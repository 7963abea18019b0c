#include "qk/util/printable.hpp"

#include <fmt/core.h>

#include "utf8.hpp"

namespace qk {
namespace {

// Valid characters that still act on a terminal or on the order a line is shown in.
bool unsafe_character(char32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f)                     // C1 controls (U+009B is CSI on some terminals)
           || cp == 0x2028 || cp == 0x2029                // line and paragraph separators
           || cp == 0x061c || cp == 0x200e || cp == 0x200f  // bidi marks
           || (cp >= 0x202a && cp <= 0x202e)              // bidi embeddings and overrides
           || (cp >= 0x2066 && cp <= 0x2069);             // bidi isolates
}

enum class Style { text, json, message };

bool plain(unsigned char c, Style style)
{
    return c >= 0x20 && c < 0x7f && c != '\\' && !(style == Style::json && c == '"');
}

// One ASCII control (or DEL, or '\\', or '"' in JSON) escaped.
void escape_ascii(std::string& out, unsigned char c, Style style)
{
    switch (c) {
    case '\\': out += "\\\\"; return;
    case '"': out += "\\\""; return;  // only reached for JSON
    case '\n': out += style == Style::message ? "\n" : "\\n"; return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    }
    if (style == Style::json) {
        if (c == '\b')
            out += "\\b";
        else if (c == '\f')
            out += "\\f";
        else
            out += fmt::format("\\u{:04x}", c);
        return;
    }
    out += fmt::format("\\x{:02x}", c);
}

std::string escaped(std::string_view s, Style style)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        // Most names need nothing: copy each run of plain ASCII at once.
        std::size_t run = i;
        while (run < s.size() && plain(static_cast<unsigned char>(s[run]), style))
            run++;
        if (run > i) {
            out.append(s.data() + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            escape_ascii(out, c, style);
            i++;
            continue;
        }
        char32_t cp = 0;
        std::size_t n = utf8::sequence(s, i, &cp);
        if (n == 0) {
            // Byte by byte: the next byte may start a valid sequence of its own.
            out += fmt::format("\\x{:02x}", c);
            i++;
        } else if (unsafe_character(cp)) {
            out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp));
            i += n;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

}  // namespace

std::string printable(std::string_view s) { return escaped(s, Style::text); }

std::string printable_join(const std::vector<std::string>& items, std::string_view separator)
{
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i)
            out += separator;
        out += printable(items[i]);
    }
    return out;
}

std::string printable_json(std::string_view s) { return escaped(s, Style::json); }

std::string printable_message(std::string_view s) { return escaped(s, Style::message); }

}  // namespace qk
