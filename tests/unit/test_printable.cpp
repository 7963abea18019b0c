// printable, printable_json and printable_message: each class of byte, and that no two names print the
// same (checked by decoding what is printed back to the bytes, exhaustively for short names and for
// random longer ones).
#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <optional>
#include <random>
#include <set>
#include <string>

#include "qk/util/printable.hpp"

using qk::printable;
using qk::printable_json;
using qk::printable_message;
using namespace std::string_literals;

namespace {

std::string utf8_of(unsigned cp)
{
    std::string out;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
    return out;
}

// The bytes a printed name stands for, read as a user would: every backslash starts an escape. nullopt
// for what printable could not have written (a lone backslash, an unknown escape).
std::optional<std::string> decode(std::string_view s, bool json)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\') {
            if (json && s[i] == '"')
                return std::nullopt;
            out += s[i];
            continue;
        }
        if (++i == s.size())
            return std::nullopt;
        char e = s[i];
        auto hex = [&](std::size_t digits) -> std::optional<unsigned> {
            if (i + digits >= s.size())
                return std::nullopt;
            std::string digits_text(s.substr(i + 1, digits));
            if (digits_text.find_first_not_of("0123456789abcdef") != std::string::npos)
                return std::nullopt;
            unsigned v = std::stoul(digits_text, nullptr, 16);
            i += digits;
            return v;
        };
        if (e == '\\' || (json && e == '"')) {
            out += e;
        } else if (e == 'n' || e == 't' || e == 'r' || (json && (e == 'b' || e == 'f'))) {
            out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : '\f';
        } else if (e == 'x') {
            auto v = hex(2);
            if (!v)
                return std::nullopt;
            out += static_cast<char>(*v);
        } else if (e == 'u') {
            auto v = hex(4);
            if (!v)
                return std::nullopt;
            out += utf8_of(*v);
        } else {
            return std::nullopt;
        }
    }
    return out;
}

// Whether what is printed could still drive a terminal: a control, a byte that is not UTF-8 or a
// character printable escapes. Without its backslashes, text that needs no escaping prints as itself.
bool has_raw_control(std::string text)
{
    std::erase(text, '\\');
    return printable(text) != text;
}

}  // namespace

TEST_CASE("printable keeps plain ASCII and valid UTF-8 as they are", "[util][printable]")
{
    CHECK(printable("packages/app/src/index.ts") == "packages/app/src/index.ts");
    CHECK(printable("a b/\"quoted\"/it's ~ {projectRoot}") == "a b/\"quoted\"/it's ~ {projectRoot}");
    CHECK(printable("caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac") == "caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac");  // é, 日本
    CHECK(printable("\xf0\x9f\x98\x80.txt") == "\xf0\x9f\x98\x80.txt");  // a 4-byte character
    CHECK(printable("\xc2\xa0nbsp") == "\xc2\xa0nbsp");                  // U+00A0, just past the C1 controls
    CHECK(printable("") == "");
}

TEST_CASE("printable escapes a backslash, C0 controls and DEL", "[util][printable]")
{
    CHECK(printable("a\\b") == "a\\\\b");
    CHECK(printable("line\nbreak") == "line\\nbreak");
    CHECK(printable("tab\there") == "tab\\there");
    CHECK(printable("cr\rover") == "cr\\rover");
    CHECK(printable("\x1b]0;title\x07") == "\\x1b]0;title\\x07");  // retitles the terminal
    CHECK(printable("\x1b[8mhidden") == "\\x1b[8mhidden");        // hides what follows
    CHECK(printable("\x1b[2K") == "\\x1b[2K");                    // erases the line
    CHECK(printable("back\bspace") == "back\\x08space");
    CHECK(printable("del\x7f") == "del\\x7f");
    CHECK(printable("nul"s + '\0' + "x") == "nul\\x00x");
    CHECK(printable("\x01\x1f") == "\\x01\\x1f");
}

TEST_CASE("printable escapes each byte that is not valid UTF-8", "[util][printable]")
{
    CHECK(printable("bad\xff") == "bad\\xff");
    CHECK(printable("\xfe\xff") == "\\xfe\\xff");
    CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");                       // an overlong '/'
    CHECK(printable("\xe0\x80\xaf") == "\\xe0\\x80\\xaf");              // another overlong '/'
    CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");              // a surrogate, U+D800
    CHECK(printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");    // past U+10FFFF
    CHECK(printable("\xe6\x97") == "\\xe6\\x97");                       // 日 cut short
    CHECK(printable("\xe6\x97z") == "\\xe6\\x97z");
    CHECK(printable("\x80lone") == "\\x80lone");                        // a lone continuation byte
    // After a stray byte, a valid character is kept.
    CHECK(printable("\xff\xc3\xa9") == "\\xff\xc3\xa9");
    CHECK(printable("\xe6\xc3\xa9") == "\\xe6\xc3\xa9");
}

TEST_CASE("printable escapes C1 controls, line separators and bidi controls", "[util][printable]")
{
    CHECK(printable("\xc2\x9b" "2K") == "\\u009b2K");  // CSI as one character
    CHECK(printable("\xc2\x80\xc2\x9f") == "\\u0080\\u009f");
    CHECK(printable("a\xe2\x80\xa8" "b\xe2\x80\xa9") == "a\\u2028b\\u2029");
    // right-to-left override
    CHECK(printable("evil\xe2\x80\xae" "txt.exe") == "evil\\u202etxt.exe");  // NOLINT(misc-misleading-bidirectional): under test
    for (unsigned cp : {0x061cu, 0x200eu, 0x200fu, 0x202au, 0x202bu, 0x202cu, 0x202du, 0x202eu, 0x2066u, 0x2067u,
                        0x2068u, 0x2069u})
        CHECK(printable(utf8_of(cp)) == fmt::format("\\u{:04x}", cp));
    // Their neighbours are ordinary characters.
    for (unsigned cp : {0x200du, 0x2027u, 0x202fu, 0x2065u, 0x206au})
        CHECK(printable(utf8_of(cp)) == utf8_of(cp));
}

TEST_CASE("printable_json writes JSON's escapes, and \\x for a byte JSON cannot hold", "[util][printable]")
{
    CHECK(printable_json("packages/app/dist") == "packages/app/dist");
    CHECK(printable_json("a\"b\\c") == "a\\\"b\\\\c");
    CHECK(printable_json("\x1b]0;title\x07") == "\\u001b]0;title\\u0007");
    CHECK(printable_json("\b\f\n\r\t") == "\\b\\f\\n\\r\\t");
    CHECK(printable_json("del\x7f") == "del\\u007f");
    CHECK(printable_json("\xc2\x9b\xe2\x80\xae") == "\\u009b\\u202e");  // NOLINT(misc-misleading-bidirectional): under test
    CHECK(printable_json("caf\xc3\xa9") == "caf\xc3\xa9");
    CHECK(printable_json("bad\xff") == "bad\\xff");
}

TEST_CASE("printable_message keeps the message's line breaks and escapes the rest", "[util][printable]")
{
    CHECK(printable_message("a.json:1:2: bad\n  fix it") == "a.json:1:2: bad\n  fix it");
    CHECK(printable_message("cannot read \x1b[2K\r\xff") == "cannot read \\x1b[2K\\r\\xff");
}

TEST_CASE("no two names print the same", "[util][printable]")
{
    // Printed back to the bytes it stands for, each name is itself: so two names never print the same.
    auto check = [](const std::string& name) {
        std::string text = printable(name);
        std::string json = printable_json(name);
        REQUIRE_FALSE(has_raw_control(text));
        REQUIRE_FALSE(has_raw_control(json));
        REQUIRE(decode(text, false) == name);
        REQUIRE(decode(json, true) == name);
    };
    // Every name of one and two bytes, exhaustively, and that none print alike.
    std::set<std::string> seen;
    for (unsigned a = 0; a < 256; ++a) {
        check(std::string(1, static_cast<char>(a)));
        REQUIRE(seen.insert(printable(std::string(1, static_cast<char>(a)))).second);
        for (unsigned b = 0; b < 256; ++b) {
            std::string name{static_cast<char>(a), static_cast<char>(b)};
            check(name);
            REQUIRE(seen.insert(printable(name)).second);
        }
    }
    // Random longer names, from bytes that make escapes and characters likely.
    const std::string alphabet = "ab\\\"x0u\n\r\t\x1b\x7f\xff\xc2\x9b\xa9\xe2\x80\xae\xed\xa0\xf0\x9f\x98";  // NOLINT(misc-misleading-bidirectional): under test
    std::mt19937 rng(25);  // NOLINT(cert-msc51-cpp): the same names every run, so a failure can be replayed
    for (int round = 0; round < 20000; ++round) {
        std::string name;
        std::size_t n = rng() % 12;
        for (std::size_t i = 0; i < n; ++i)
            name += alphabet[rng() % alphabet.size()];
        check(name);
    }
}
