// json_edit and unified_diff: values added to a configuration file's text with everything else kept as
// written (indentation, key order, comments, a trailing comma), and the change shown as diff -u does.
#include <catch2/catch.hpp>

#include "qk/util/unified_diff.hpp"
#include "qk/workspace/json_edit.hpp"

using namespace qk::workspace;

namespace {

// The value `path` names in `text` parsed, for an edit of it (the document is kept alive by the caller).
const Json& walk(const Json& doc, const std::vector<std::string>& path)
{
    const Json* at = &doc;
    for (const std::string& key : path)
        at = at->find(key);
    REQUIRE(at);
    return *at;
}

Json parsed(const std::string& text)
{
    auto doc = parse_json(text, "project.json", TrailingCommas::allow);
    REQUIRE(doc);
    return std::move(*doc);
}

std::string still_json(qk::Result<std::string> out)
{
    REQUIRE(out);
    REQUIRE(parse_json(*out, "project.json", TrailingCommas::allow));
    return *out;
}

std::string appended(const std::string& text, const std::vector<std::string>& path, const std::vector<std::string>& items)
{
    Json doc = parsed(text);
    return still_json(append_to_array(text, walk(doc, path), items));
}

std::string inserted(const std::string& text, const std::vector<std::string>& path, const std::string& key,
                     const std::string& value)
{
    Json doc = parsed(text);
    return still_json(insert_member(text, walk(doc, path), key, value));
}

}  // namespace

TEST_CASE("append_to_array: multi-line, inline, empty, with a trailing comma and comments", "[workspace][json-edit]")
{
    CHECK(appended("{\n  \"inputs\": [\n    \"default\", // ours\n    \"^default\"\n  ]\n}\n", {"inputs"},
                   {"\"{workspaceRoot}/a.txt\""}) ==
          "{\n  \"inputs\": [\n    \"default\", // ours\n    \"^default\",\n    \"{workspaceRoot}/a.txt\"\n  ]\n}\n");
    CHECK(appended("{\"o\": [\"a\"]}", {"o"}, {"\"b\"", "\"c\""}) == "{\"o\": [\"a\", \"b\", \"c\"]}");
    CHECK(appended("{\"o\": []}", {"o"}, {"\"b\""}) == "{\"o\": [\"b\"]}");
    CHECK(appended("{\"o\": [\"a\",]}", {"o"}, {"\"b\""}) == "{\"o\": [\"a\", \"b\"]}");
    CHECK(appended("{\n\t\"o\": [\n\t\t\"a\",\n\t]\n}", {"o"}, {"\"b\""}) == "{\n\t\"o\": [\n\t\t\"a\",\n\t\t\"b\",\n\t]\n}");
    // A bracket inside a string or a comment is not the array's end; a name with é counts as one column.
    CHECK(appended("{\"é\": 1, \"o\": [\"]\" /* ] */]}", {"o"}, {"\"b\""}) ==
          "{\"é\": 1, \"o\": [\"]\" /* ] */, \"b\"]}");
}

TEST_CASE("insert_member: first in the object, indented as its members", "[workspace][json-edit]")
{
    CHECK(inserted("{\n  \"targets\": {\n    \"build\": {\n      \"command\": \"tsc\"\n    }\n  }\n}\n",
                   {"targets", "build"}, "inputs", "[\"default\"]") ==
          "{\n  \"targets\": {\n    \"build\": {\n      \"inputs\": [\"default\"],\n      \"command\": \"tsc\"\n    }\n  }\n}\n");
    CHECK(inserted("{\"build\": {\"command\": \"tsc\"}}", {"build"}, "outputs", "[]") ==
          "{\"build\": { \"outputs\": [], \"command\": \"tsc\"}}");
    CHECK(inserted("{\"build\": {}}", {"build"}, "outputs", "[]") == "{\"build\": {\"outputs\": []}}");
    CHECK(json_string("a\"b") == "\"a\\\"b\"");
    auto doc = parse_json("{\"a\": 1}", "x.json");
    REQUIRE(doc);
    CHECK_FALSE(append_to_array("{\"a\": 1}", *doc->find("a"), {"2"}));
    CHECK_FALSE(insert_member("{\"a\": 1}", *doc->find("a"), "k", "1"));
}

TEST_CASE("unified_diff: one hunk with three lines of context, nothing for the same text", "[util][json-edit]")
{
    CHECK(qk::unified_diff("a\nb\n", "a\nb\n", "p.json").empty());
    CHECK(qk::unified_diff("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nnew\n5\n6\n7\n8\n", "p.json") ==
          "--- a/p.json\n+++ b/p.json\n@@ -2,6 +2,7 @@\n 2\n 3\n 4\n+new\n 5\n 6\n 7\n");
    CHECK(qk::unified_diff("x\n", "y\n", "p.json") == "--- a/p.json\n+++ b/p.json\n@@ -1,1 +1,1 @@\n-x\n+y\n");
}
