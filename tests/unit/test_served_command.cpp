// The channel between qk and the run's sandbox helper (qk/enforce/served_command.hpp): requests and answers
// read back as written, and what is not one of them refused with a sentence, never taken for another.
#include <catch2/catch.hpp>

#include <string>

#include "qk/enforce/served_command.hpp"

using namespace qk;
using namespace qk::enforce;

TEST_CASE("a served command reads back as it was written, whatever its fields hold but NUL", "[enforce][served]")
{
    ServedCommand c{{"/usr/bin/qk-sandbox-exec", "/run/plan-0", "--", "sh", "-c", "echo 'a b'\n\ttab", ""},
                    {"PATH=/bin", "EMPTY=", "MULTI=line\nline"},
                    "/work/ws dir/app",
                    true};
    const std::string body = encode_body(c);
    auto back = decode_served_command(body);
    REQUIRE(back);
    CHECK(*back == c);
    c.own_process_group = false;
    c.env.clear();
    auto bare = decode_served_command(encode_body(c));
    REQUIRE(bare);
    CHECK(*bare == c);
}

TEST_CASE("a request cut short, empty, relative or followed by more is refused", "[enforce][served]")
{
    ServedCommand c{{"helper", "plan", "--", "true"}, {"A=1"}, "/ws", false};
    const std::string body = encode_body(c);
    for (std::size_t cut : {std::size_t{0}, std::size_t{1}, body.size() / 2, body.size() - 1})
        CHECK_FALSE(decode_served_command(body.substr(0, cut)));
    CHECK_FALSE(decode_served_command(body + "extra"));
    CHECK_FALSE(decode_served_command(encode_body({{}, {}, "/ws", false})));  // no command line
    CHECK_FALSE(decode_served_command(encode_body({{"x"}, {}, "ws", false})));  // not absolute
    std::string bad_group = body;
    bad_group[bad_group.find('\0') + 1] = '7';
    CHECK_FALSE(decode_served_command(bad_group));
    std::string bad_count = body;
    const std::size_t argc_at = bad_count.find(std::string("\0" "4\0", 3));
    REQUIRE(argc_at != std::string::npos);
    bad_count[argc_at + 1] = 'x';
    CHECK_FALSE(decode_served_command(bad_count));
}

TEST_CASE("a header names its body's length, and one of another version says what to do", "[enforce][served]")
{
    auto length = parse_served_header(served_header(1234));
    REQUIRE(length);
    CHECK(*length == 1234);
    auto other = parse_served_header("qk-serve 2 10\n");
    REQUIRE_FALSE(other);
    CHECK(other.error().message.find("install them together") != std::string::npos);
    CHECK_FALSE(parse_served_header("qk-serve 1 \n"));
    CHECK_FALSE(parse_served_header("qk-serve 1 12"));
    CHECK_FALSE(parse_served_header("qk-serve 1 -3\n"));
    CHECK_FALSE(parse_served_header("qk-serve 1 99999999999999\n"));  // more than any command line
    CHECK(served_header(0).size() <= kServedHeaderMax);
}

TEST_CASE("answers are read a whole line at a time, in order, and a stranger line is an error", "[enforce][served]")
{
    std::string buffer = encode_answer({ServedAnswer::Kind::started, 4242, {}});
    buffer += encode_answer({ServedAnswer::Kind::refused, 2, "cwd"});
    buffer += encode_answer({ServedAnswer::Kind::ended, 256, {}});
    buffer += "fail";  // the start of a line not yet whole
    const ServedAnswer expected[] = {{ServedAnswer::Kind::started, 4242, {}},
                                     {ServedAnswer::Kind::refused, 2, "cwd"},
                                     {ServedAnswer::Kind::ended, 256, {}}};
    for (const ServedAnswer& e : expected) {
        auto a = take_answer(buffer);
        REQUIRE(a);
        REQUIRE(*a);
        CHECK(**a == e);
    }
    auto partial = take_answer(buffer);
    REQUIRE(partial);
    CHECK_FALSE(*partial);
    buffer += "ed 12\n";
    auto failed = take_answer(buffer);
    REQUIRE(failed);
    REQUIRE(*failed);
    CHECK(**failed == ServedAnswer{ServedAnswer::Kind::failed, 12, {}});
    for (const char* stranger : {"started\n", "started x\n", "ended 1 2\n", "refused 2\n", "hello 1\n", "\n"}) {
        std::string b = stranger;
        auto a = take_answer(b);
        CHECK_FALSE(a);
    }
}
