// The configuration JSON reader: JSONC as Nx reads it, positions, and messages naming line:column.
#include <catch2/catch.hpp>

#include "qk/workspace/workspace.hpp"

using qk::workspace::Json;
using qk::workspace::parse_json;

namespace {

std::string parse_error(std::string_view text)
{
    auto r = parse_json(text, "f.json");
    REQUIRE_FALSE(r.ok());
    return r.error().message;
}

}  // namespace

TEST_CASE("parse_json reads JSON with comments, keeping member order and positions", "[workspace]")
{
    auto r = parse_json("// leading comment\n"
                        "{\n"
                        "  \"z\": 1, /* inline */ \"a\": [true, false, null, -2.5e1],\n"
                        "  \"s\": \"tab\\there \\u00e9 \\ud83d\\ude00\"\n"
                        "}\n",
                        "f.json");
    REQUIRE(r.ok());
    const Json& j = *r;
    REQUIRE(j.is_object());
    REQUIRE(j.as_object().size() == 3);
    CHECK(j.as_object()[0].first == "z");
    CHECK(j.as_object()[1].first == "a");
    CHECK(j.line() == 2);
    CHECK(j.column() == 1);
    const Json* a = j.find("a");
    REQUIRE(a);
    CHECK(a->line() == 3);
    CHECK(a->column() == 29);
    CHECK(a->as_array()[3].as_number() == -25.0);
    CHECK(a->as_array()[1].line() == 3);
    CHECK(a->as_array()[1].column() == 36);
    CHECK(j.find("s")->as_string() == "tab\there \xC3\xA9 \xF0\x9F\x98\x80");
    CHECK(j.dump() == R"({"z":1,"a":[true,false,null,-25],"s":"tab\there é 😀"})");
    CHECK(j.canonical() == R"({"a":[true,false,null,-25],"s":"tab\there é 😀","z":1})");
}

TEST_CASE("parse_json skips a leading byte order mark", "[workspace]")
{
    auto r = parse_json("\xEF\xBB\xBF{\"a\": [1]}", "f.json");
    REQUIRE(r.ok());
    CHECK(r->dump() == R"({"a":[1]})");
    CHECK(r->column() == 1);
    CHECK(r->find("a")->column() == 7);
}

TEST_CASE("parse_json: a repeated key keeps its first place and its last value, as JSON.parse", "[workspace]")
{
    auto r = parse_json(R"({"a": 1, "b": 2, "a": 3})", "f.json");
    REQUIRE(r.ok());
    REQUIRE(r->as_object().size() == 2);
    CHECK(r->as_object()[0].first == "a");
    CHECK(r->find("a")->as_number() == 3);
    CHECK(r->dump() == R"({"a":3,"b":2})");
}

TEST_CASE("parse_json: canonical text is the same for reformatted, reordered content", "[workspace]")
{
    auto a = parse_json("{\"b\": {\"y\": 1, \"x\": [1, 2]}, \"a\": \"s\"}", "a.json");
    auto b = parse_json("{\n  // same, reordered\n  \"a\": \"s\",\n  \"b\": { \"x\": [1,2], \"y\": 1.0 }\n}", "b.json");
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->canonical() == b->canonical());
    CHECK(a->dump() != b->dump());
    CHECK_FALSE(*a == *b);  // members compared in order
}

TEST_CASE("parse_json allows one trailing comma only when asked, as Nx reads its configuration", "[workspace]")
{
    using qk::workspace::TrailingCommas;
    auto r = parse_json("{\"a\": [1, 2,], \"b\": {\"c\": 1,}, // after the last one\n}", "f.json",
                        TrailingCommas::allow);
    INFO((r.ok() ? std::string() : r.error().message));
    REQUIRE(r.ok());
    CHECK(r->dump() == R"({"a":[1,2],"b":{"c":1}})");
    auto refused = [](std::string_view text) {
        auto bad = parse_json(text, "f.json", TrailingCommas::allow);
        return bad.ok() ? std::string() : bad.error().message;
    };
    // A comma alone or two in a row are errors in jsonc-parser too.
    CHECK(refused("[,]") ==
          "f.json:1:2: malformed JSON: expected a value (an object, array, string, number, true, false or null), "
          "found ','");
    CHECK(refused("{,}") == "f.json:1:2: malformed JSON: expected a property name in double quotes or '}', found ','");
    CHECK(refused("[1,,]") ==
          "f.json:1:4: malformed JSON: expected a value (an object, array, string, number, true, false or null), "
          "found ','");
    CHECK(refused("{\"a\": 1,,}") ==
          "f.json:1:9: malformed JSON: expected a property name in double quotes or '}' after ',', found ','");
}

TEST_CASE("parse_json names line:column and what was expected", "[workspace]")
{
    CHECK(parse_error("{\"a\": 1,}") == "f.json:1:9: malformed JSON: expected a property name in double quotes after "
                                        "',' (trailing commas are not allowed), found '}'");
    CHECK(parse_error("{\n  \"a\": 1\n  \"b\": 2\n}") ==
          "f.json:3:3: malformed JSON: expected ',' or '}' after a property value, found a string");
    CHECK(parse_error("[1, 2,]") ==
          "f.json:1:7: malformed JSON: expected a value after ',' (trailing commas are not allowed), found ']'");
    CHECK(parse_error("[1 2]") == "f.json:1:4: malformed JSON: expected ',' or ']' after an array element, found a number");
    CHECK(parse_error("{\"a\": tru}") == "f.json:1:7: malformed JSON: expected a value (an object, array, string, "
                                         "number, true, false or null), found 'tru'");
    CHECK(parse_error("{\"a\" 1}") == "f.json:1:6: malformed JSON: expected ':' after the property name \"a\", found a number");
    CHECK(parse_error("{'a': 1}") ==
          "f.json:1:2: malformed JSON: expected a property name in double quotes or '}', found '''");
    CHECK(parse_error("{\"a\": \"abc") == "f.json:1:7: malformed JSON: unterminated string (a '\"' is missing)");
    CHECK(parse_error("{\"a\": \"ab\ncd\"}") ==
          "f.json:1:10: malformed JSON: unterminated string (a '\"' is missing before the end of the line)");
    CHECK(parse_error("{\"\xC3\xA9\xC3\xA9\": x}") ==
          "f.json:1:8: malformed JSON: expected a value (an object, array, string, number, true, false or null), "
          "found 'x'");
    CHECK(parse_error("") == "f.json:1:1: malformed JSON: expected a value, found the end of the file");
    CHECK(parse_error("  \n\n") == "f.json:3:1: malformed JSON: expected a value, found the end of the file");
    CHECK(parse_error("{} x") == "f.json:1:4: malformed JSON: expected the end of the file after the JSON value");
    CHECK(parse_error("{\n  /* x\n") == "f.json:2:3: malformed JSON: unterminated /* comment");
    CHECK(parse_error("[01]") == "f.json:1:2: malformed JSON: a number cannot start with 0 (leading zeros are not "
                                 "allowed)");
    CHECK(parse_error("[1.]") == "f.json:1:4: malformed JSON: expected a digit after the decimal point, found ']'");
    CHECK(parse_error("[\"\\x\"]") == "f.json:1:3: malformed JSON: invalid escape sequence '\\x' in a string");
    CHECK(parse_error("[\"\\u12G4\"]") == "f.json:1:3: malformed JSON: expected four hex digits after \\u");
    CHECK(parse_error("{\"a\": {\"b\": [\n\t\n  }") ==
          "f.json:3:3: malformed JSON: expected a value (an object, array, string, number, true, false or null), "
          "found '}'");
}

TEST_CASE("parse_json refuses values nested too deep instead of overflowing the stack", "[workspace]")
{
    std::string deep(100000, '[');
    auto r = parse_json(deep, "deep.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "deep.json:1:514: malformed JSON: values nested more than 512 deep");
}

TEST_CASE("Json: set, erase, truthiness", "[workspace]")
{
    Json o = Json::object();
    o.set("a", Json::number(1));
    o.set("b", Json::string(""));
    o.set("a", Json::boolean(false));
    CHECK(o.dump() == R"({"a":false,"b":""})");
    CHECK_FALSE(o.find("a")->truthy());
    CHECK_FALSE(o.find("b")->truthy());
    CHECK(Json::array().truthy());
    CHECK(o.erase("a"));
    CHECK_FALSE(o.erase("a"));
    CHECK(o.dump() == R"({"b":""})");
    CHECK(Json::number(0.1).dump() == "0.1");
    CHECK(Json::string("q\"\\\n\x01").dump() == R"("q\"\\\n\u0001")");
}
