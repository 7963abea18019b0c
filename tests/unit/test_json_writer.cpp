#include <catch2/catch.hpp>

#include "qk/util/json_writer.hpp"

using qk::JsonWriter;

static std::string escaped(std::string_view s)
{
    std::string out;
    JsonWriter::escape(out, s);
    return out;
}

TEST_CASE("strings are escaped per RFC 8259", "[util][json]")
{
    CHECK(escaped("plain") == "\"plain\"");
    CHECK(escaped("a\"b\\c") == "\"a\\\"b\\\\c\"");
    CHECK(escaped("tab\tnl\ncr\r") == "\"tab\\tnl\\ncr\\r\"");
    CHECK(escaped(std::string_view("\x01\x1f", 2)) == "\"\\u0001\\u001f\"");
    CHECK(escaped("caf\xc3\xa9") == "\"caf\xc3\xa9\"");        // valid UTF-8 passes through
    CHECK(escaped("bad\xff") == "\"bad\\ufffd\"");              // an invalid byte becomes U+FFFD
    CHECK(escaped("\xc0\xaf") == "\"\\ufffd\\ufffd\"");         // an overlong '/' is not UTF-8
    CHECK(escaped("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\""); // nor is a surrogate
    // Runs of plain ASCII between the bytes that need work are copied whole.
    CHECK(escaped("/a b/\xc3\xa9t\xc3\xa9/\"q\"/\x7f/\xffz") == "\"/a b/\xc3\xa9t\xc3\xa9/\\\"q\\\"/\x7f/\\ufffdz\"");
}

TEST_CASE("objects and arrays nest with commas in the right places", "[util][json]")
{
    JsonWriter w(0);
    w.begin_object();
    w.key("a").value(1);
    w.key("b").begin_array().value("x").value(true).null().end_array();
    w.key("c").begin_object().end_object();
    w.key("d").strings({"p", "q"});
    w.end_object();
    CHECK(w.str() == R"({"a":1,"b":["x",true,null],"c":{},"d":["p","q"]})");
}
