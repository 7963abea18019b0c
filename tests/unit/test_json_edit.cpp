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

TEST_CASE("append_to_array: after a comment on the last element, or in a container holding only a comment",
          "[workspace][json-edit]")
{
    // The comma goes after the value, never into the comment that follows it (the result parses: still_json).
    CHECK(appended("{\n  \"inputs\": [\n    \"default\",\n    \"^default\" // ours\n  ]\n}\n", {"inputs"}, {"\"x\""}) ==
          "{\n  \"inputs\": [\n    \"default\",\n    \"^default\",\n    \"x\" // ours\n  ]\n}\n");
    CHECK(appended("{\"o\": [\"a\" /* last */]}", {"o"}, {"\"b\""}) == "{\"o\": [\"a\", \"b\" /* last */]}");
    CHECK(appended("{\"o\": [ /* none */ ]}", {"o"}, {"\"b\""}) == "{\"o\": [\"b\" /* none */ ]}");
    CHECK(inserted("{\"t\": { /* none */ }}", {"t"}, "inputs", "[]").find("/* none */") != std::string::npos);
}

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
          "{\"é\": 1, \"o\": [\"]\", \"b\" /* ] */]}");
}

TEST_CASE("insert_member: first in the object, indented as its members", "[workspace][json-edit]")
{
    CHECK(inserted("{\n  \"targets\": {\n    \"build\": {\n      \"command\": \"tsc\"\n    }\n  }\n}\n",
                   {"targets", "build"}, "inputs", "[\"default\"]") ==
          "{\n  \"targets\": {\n    \"build\": {\n      \"inputs\": [\"default\"],\n      \"command\": \"tsc\"\n    }\n  }\n}\n");
    CHECK(inserted("{\"build\": {\"command\": \"tsc\"}}", {"build"}, "outputs", "[]") ==
          "{\"build\": {\"outputs\": [], \"command\": \"tsc\"}}");
    CHECK(inserted("{\"build\": { \"command\": \"tsc\" }}", {"build"}, "outputs", "[]") ==
          "{\"build\": { \"outputs\": [], \"command\": \"tsc\" }}");
    CHECK(inserted("{\"build\": {}}", {"build"}, "outputs", "[]") == "{\"build\": {\"outputs\": []}}");
    CHECK(json_string("a\"b") == "\"a\\\"b\"");
    auto doc = parse_json("{\"a\": 1}", "x.json");
    REQUIRE(doc);
    CHECK_FALSE(append_to_array("{\"a\": 1}", *doc->find("a"), {"2"}));
    CHECK_FALSE(insert_member("{\"a\": 1}", *doc->find("a"), "k", "1"));
}

TEST_CASE("insert_member: last in the object, as a person adds a section to a package.json", "[workspace][json-edit]")
{
    using qk::workspace::MemberPlace;
    const std::string manifest = "{\n  \"name\": \"lib\",\n  \"dependencies\": {\n    \"a\": \"1\"\n  }\n}\n";
    Json doc = parsed(manifest);
    CHECK(still_json(insert_member(manifest, doc, "nx", "{}", MemberPlace::last)) ==
          "{\n  \"name\": \"lib\",\n  \"dependencies\": {\n    \"a\": \"1\"\n  },\n  \"nx\": {}\n}\n");
    // A comment on the last member's line stays with it; a trailing comma stays trailing.
    const std::string commented = "{\n  \"name\": \"lib\", // the package\n}\n";
    CHECK(still_json(insert_member(commented, parsed(commented), "nx", "{}", MemberPlace::last)) ==
          "{\n  \"name\": \"lib\", // the package\n  \"nx\": {},\n}\n");
    const std::string inline_text = "{\"name\": \"lib\"}";
    CHECK(still_json(insert_member(inline_text, parsed(inline_text), "nx", "{}", MemberPlace::last)) ==
          "{\"name\": \"lib\", \"nx\": {}}");
    const std::vector<std::string> keys{"nx", "targets"};
    CHECK(still_json(insert_nested_member(manifest, doc, keys, "{}", MemberPlace::last)) ==
          "{\n  \"name\": \"lib\",\n  \"dependencies\": {\n    \"a\": \"1\"\n  },\n  \"nx\": {\n    "
          "\"targets\": {}\n  }\n}\n");
    CHECK(still_json(insert_member("{}", parsed("{}"), "nx", "{}", MemberPlace::last)) == "{\"nx\": {}}");
}

TEST_CASE("insert_nested_member: the objects on the way made, a line per member where the object spans lines",
          "[workspace][json-edit]")
{
    const std::vector<std::string> keys{"targets", "test", "outputs"};
    Json doc = parsed("{\n    \"nx\": {\n        \"name\": \"lib\"\n    }\n}\n");
    CHECK(still_json(insert_nested_member("{\n    \"nx\": {\n        \"name\": \"lib\"\n    }\n}\n", walk(doc, {"nx"}),
                                          keys, "[\"o\"]")) ==
          "{\n    \"nx\": {\n        \"targets\": {\n            \"test\": {\n                \"outputs\": [\"o\"]\n"
          "            }\n        },\n        \"name\": \"lib\"\n    }\n}\n");
    Json inline_doc = parsed("{\"nx\": {\"name\": \"lib\"}}");
    CHECK(still_json(insert_nested_member("{\"nx\": {\"name\": \"lib\"}}", walk(inline_doc, {"nx"}), keys, "[]")) ==
          "{\"nx\": {\"targets\": {\"test\": {\"outputs\": []}}, \"name\": \"lib\"}}");
    CHECK_FALSE(insert_nested_member("{}", parsed("{}"), {}, "1"));
}

TEST_CASE("unified_diff: a hunk with three lines of context, nothing for the same text", "[util][json-edit]")
{
    CHECK(qk::unified_diff("a\nb\n", "a\nb\n", "p.json").empty());
    CHECK(qk::unified_diff("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nnew\n5\n6\n7\n8\n", "p.json") ==
          "--- a/p.json\n+++ b/p.json\n@@ -2,6 +2,7 @@\n 2\n 3\n 4\n+new\n 5\n 6\n 7\n");
    CHECK(qk::unified_diff("x\n", "y\n", "p.json") == "--- a/p.json\n+++ b/p.json\n@@ -1,1 +1,1 @@\n-x\n+y\n");
}

TEST_CASE("unified_diff: a last line without a newline is marked, as diff -u marks it", "[util][json-edit]")
{
    CHECK(qk::unified_diff("a\nb", "a\nb\nc", "p.json") ==
          "--- a/p.json\n+++ b/p.json\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n"
          "\\ No newline at end of file\n");
    CHECK(qk::unified_diff("a\n", "a", "p.json") ==
          "--- a/p.json\n+++ b/p.json\n@@ -1,1 +1,1 @@\n-a\n+a\n\\ No newline at end of file\n");
}

TEST_CASE("unified_diff: edits far apart are a hunk each, close ones one", "[util][json-edit]")
{
    std::string before;
    for (int i = 1; i <= 20; ++i)
        before += std::to_string(i) + "\n";
    // A line changed (a comma added) and one added after it, near the top; one added near the end.
    std::string after = before;
    after.replace(after.find("2\n"), 2, "2,\nnew\n");
    after.replace(after.find("18\n"), 3, "18\nlast\n");
    CHECK(qk::unified_diff(before, after, "nx.json") == "--- a/nx.json\n+++ b/nx.json\n"
                                                        "@@ -1,5 +1,6 @@\n 1\n-2\n+2,\n+new\n 3\n 4\n 5\n"
                                                        "@@ -16,5 +17,6 @@\n 16\n 17\n 18\n+last\n 19\n 20\n");
    // Six lines kept between two additions: their context meets, one hunk.
    std::string close = before;
    close.replace(close.find("4\n"), 2, "4\nfirst\n");
    close.replace(close.find("10\n"), 3, "10\nsecond\n");
    CHECK(qk::unified_diff(before, close, "p.json") == "--- a/p.json\n+++ b/p.json\n"
                                                       "@@ -2,12 +2,14 @@\n 2\n 3\n 4\n+first\n 5\n 6\n 7\n 8\n 9\n"
                                                       " 10\n+second\n 11\n 12\n 13\n");
}

TEST_CASE("replace_literal: a false (or true, null) replaced by a JSON text where it stands", "[workspace][json-edit]")
{
    const std::string text = "{\n  \"qk:sandbox\": { \"network\": false }, // none\n  \"x\": true\n}\n";
    Json doc = parsed(text);
    CHECK(still_json(replace_literal(text, walk(doc, {"qk:sandbox", "network"}), R"(["a.test:443"])")) ==
          "{\n  \"qk:sandbox\": { \"network\": [\"a.test:443\"] }, // none\n  \"x\": true\n}\n");
    CHECK(still_json(replace_literal(text, walk(doc, {"x"}), "[]")) ==
          "{\n  \"qk:sandbox\": { \"network\": false }, // none\n  \"x\": []\n}\n");
    auto not_literal = replace_literal(text, walk(doc, {"qk:sandbox"}), "[]");
    REQUIRE_FALSE(not_literal);
    CHECK(not_literal.error().message == "not true, false or null");
}
