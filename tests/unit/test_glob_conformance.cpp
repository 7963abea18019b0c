// Conformance vectors for the glob engine. Nx's native hasher matches filesets with the Rust crate globset
// (GlobBuilder with literal_separator(true) and backslash_escape(true), nrwl/nx packages/nx/src/native/glob.rs),
// so globset's own test table (BurntSushi/ripgrep crates/globset/src/glob.rs: matches!/nmatches!/syntaxerr!)
// applies, read with literal_separator on: `*` and `?` never cross '/'. Where that option changes the
// answer, the vector says so.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "qk/workspace/glob.hpp"

using qk::workspace::Glob;

namespace {

struct Vector {
    const char* pattern;
    const char* path;
    bool match;
};

bool glob_matches(std::string_view pattern, std::string_view path)
{
    auto g = Glob::compile(pattern);
    INFO("pattern " << pattern);
    REQUIRE(g.ok());
    return g->matches(path);
}

void check_all(const std::vector<Vector>& table)
{
    for (const Vector& v : table) {
        INFO(v.pattern << " ~ " << v.path);
        CHECK(glob_matches(v.pattern, v.path) == v.match);
    }
}

}  // namespace

TEST_CASE("globset: literals, stars and ranges", "[workspace][glob][conformance]")
{
    check_all({
        {"a", "a", true},
        {"a*b", "a_b", true},
        {"a*b*c", "abc", true},
        {"a*b*c", "a_b_c", true},
        {"a*b*c", "a___b___c", true},
        {"abc*abc*abc", "abcabcabcabcabcabcabc", true},
        {"a*a*a*a*a*a*a*a*a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true},
        {"a*b[xyz]c*d", "abxcdbxcddd", true},
        {"*.rs", ".rs", true},
        {"\xe2\x98\x83", "\xe2\x98\x83", true},
        {"a*b*c", "abcd", false},
        {"abc*abc*abc", "abcabcabcabcabcabcabca", false},
        {"a", "foo/a", false},
        {"./foo", "foo", false},
        {"a[0-9]b", "a0b", true},
        {"a[0-9]b", "a9b", true},
        {"a[!0-9]b", "a_b", true},
        {"[a-z123]", "1", true},
        {"[1a-z23]", "1", true},
        {"[123a-z]", "1", true},
        {"[abc-]", "-", true},
        {"[-abc]", "-", true},
        {"[-a-c]", "b", true},
        {"[a-c-]", "b", true},
        {"[-]", "-", true},
        {"a[^0-9]b", "a_b", true},
        {"a[0-9]b", "a_b", false},
        {"a[!0-9]b", "a0b", false},
        {"a[!0-9]b", "a9b", false},
        {"[!-]", "-", false},
        {"a[^0-9]b", "a0b", false},
        {"a[^0-9]b", "a9b", false},
        {"[^-]", "-", false},
        {"_[[]_[]]_[?]_[*]_!_", "_[_]_?_*_!_", true},
        {"*hello.txt", "hello.txt", true},
        {"*hello.txt", "gareth_says_hello.txt", true},
        {"*hello.txt", "some\\path\\to\\hello.txt", true},  // '\' is no separator on Unix
        {"*some/path/to/hello.txt", "some/path/to/hello.txt", true},
        {"*hello.txt", "hello.txt-and-then-some", false},
        {"*hello.txt", "goodbye.txt", false},
        {"*some/path/to/hello.txt", "some/path/to/hello.txt-and-then-some", false},
        {"*some/path/to/hello.txt", "some/other/path/to/hello.txt", false},
        // globset matches these by default; literal_separator (Nx) makes `*` stop at '/'.
        {"*hello.txt", "some/path/to/hello.txt", false},
        {"*hello.txt", "/an/absolute/path/to/hello.txt", false},
        {"*some/path/to/hello.txt", "a/bigger/some/path/to/hello.txt", false},
        {"*.c", "mozilla-sha1/sha1.c", false},
        {"/*.c", "mozilla-sha1/sha1.c", false},
        {"abc/def", "abc/def", true},
        {"abc?def", "abc/def", false},
        {"abc*def", "abc/def", false},
        {"abc\\def", "abc/def", false},
    });
}

TEST_CASE("globset: recursive ** (literal_separator)", "[workspace][glob][conformance]")
{
    check_all({
        {"some/**/needle.txt", "some/needle.txt", true},
        {"some/**/needle.txt", "some/one/needle.txt", true},
        {"some/**/needle.txt", "some/one/two/needle.txt", true},
        {"some/**/needle.txt", "some/other/needle.txt", true},
        {"**", "abcde", true},
        {"**", "", true},
        {"**", ".asdf", true},
        {"**", "/x/.asdf", true},
        {"some/**/**/needle.txt", "some/needle.txt", true},
        {"some/**/**/needle.txt", "some/one/needle.txt", true},
        {"some/**/**/needle.txt", "some/one/two/needle.txt", true},
        {"some/**/**/needle.txt", "some/other/needle.txt", true},
        {"**/test", "one/two/test", true},
        {"**/test", "one/test", true},
        {"**/test", "test", true},
        {"/**/test", "/one/two/test", true},
        {"/**/test", "/one/test", true},
        {"/**/test", "/test", true},
        {"**/.*", ".abc", true},
        {"**/.*", "abc/.abc", true},
        {"**/foo/bar", "foo/bar", true},
        {".*/**", ".abc/abc", true},
        {"test/**", "test/", true},
        {"test/**", "test/one", true},
        {"test/**", "test/one/two", true},
        {"some/*/needle.txt", "some/one/needle.txt", true},
        {"some/**/needle.txt", "some/other/notthis.txt", false},
        {"some/**/**/needle.txt", "some/other/notthis.txt", false},
        {"/**/test", "test", false},
        {"/**/test", "/one/notthis", false},
        {"/**/test", "/notthis", false},
        {"**/.*", "ab.c", false},
        {"**/.*", "abc/ab.c", false},
        {".*/**", "a.bc", false},
        {".*/**", "abc/a.bc", false},
        {"**/foo", "foofoo", false},
        {"**/foo/bar", "foofoo/bar", false},
        {"**/m4/ltoptions.m4", "csharp/src/packages/repositories.config", false},
        {"some/*/needle.txt", "some/needle.txt", false},
        {"some/*/needle.txt", "some/one/two/needle.txt", false},
        {"some/*/needle.txt", "some/one/two/three/needle.txt", false},
        {".*/**", ".abc", false},
        {"foo/**", "foo", false},
        // `**` next to other text is two stars (globset re28-re34).
        {"a**", "abc", true},
        {"a**", "a/bc", false},
        {"**a", "bca", true},
        {"a**b", "a/b", false},
        {"a/**/**/**/b", "a/b", true},
        {"**/**/**", "x/y", true},
    });
}

TEST_CASE("globset: alternates and escapes", "[workspace][glob][conformance]")
{
    check_all({
        {"a,b", "a,b", true},
        {",", ",", true},
        {"{a,b}", "a", true},
        {"{a,b}", "b", true},
        {"{a,b}", "c", false},
        {"{**/src/**,foo}", "abc/src/bar", true},
        {"{**/src/**,foo}", "foo", true},
        {"{**/src/**,foo}", "abc/bar", false},
        {"{[}],foo}", "}", true},
        {"{foo}", "foo", true},
        {"{}", "", true},
        {"{,}", "", true},
        {"{*.foo,*.bar,*.wat}", "test.foo", true},
        {"{*.foo,*.bar,*.wat}", "test.bar", true},
        {"{*.foo,*.bar,*.wat}", "test.wat", true},
        {"foo{,.txt}", "foo.txt", true},
        // globset drops empty alternatives (matchalt15), but Nx's parser reads a leading `{,` as an optional
        // group (glob_parser.rs brace_group_with_empty_item), so in Nx `foo{,.txt}` matches `foo` too.
        {"foo{,.txt}", "foo", true},
        {"foo{.txt,}", "foo", false},
        {"{a,b{c,d}}", "bc", true},
        {"{a,b{c,d}}", "bd", true},
        {"{a,b{c,d}}", "a", true},
        {"{a,b{c,d}}", "b", false},
        {"{a,{b,c}}", "c", true},
        {"{{a,b},{c,d}}", "d", true},
        {"\\[", "[", true},
        {"\\?", "?", true},
        {"\\?", "a", false},
        {"\\*", "*", true},
        {"\\*", "ab", false},
        {"\\a", "a", true},
    });
}

TEST_CASE("globset: syntax errors", "[workspace][glob][conformance]")
{
    for (const char* bad : {"[", "[]", "[!", "[!]", "[z-a]", "[z--]", "{a,b", "{a,{b,c}", "a,b}", "{a,b}}", "a\\"}) {
        INFO(bad);
        CHECK_FALSE(Glob::compile(bad).ok());
    }
}
