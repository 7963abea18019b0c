// Glob: each piece of syntax, dotfiles, the edge cases qk had to decide, errors, the literal prefix.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "qk/workspace/glob.hpp"

using qk::workspace::Glob;

namespace {

Glob compiled(std::string_view pattern)
{
    auto g = Glob::compile(pattern);
    INFO("pattern " << pattern << (g.ok() ? "" : ": " + g.error().message));
    REQUIRE(g.ok());
    return std::move(*g);
}

bool m(std::string_view pattern, std::string_view path)
{
    return compiled(pattern).matches(path);
}

std::string error_of(std::string_view pattern)
{
    auto g = Glob::compile(pattern);
    REQUIRE_FALSE(g.ok());
    return g.error().message;
}

}  // namespace

TEST_CASE("wildcards * and ? stay inside one component and match dotfiles", "[workspace][glob]")
{
    CHECK(m("*", ".eslintrc.json"));
    CHECK(m("*.json", ".json"));
    CHECK(m("src/*.ts", "src/.hidden.ts"));
    CHECK_FALSE(m("src/*.ts", "src/a/b.ts"));
    CHECK_FALSE(m("*", "a/b"));
    CHECK(m("?.ts", "a.ts"));
    CHECK(m("?.ts", "\xc3\xa9.ts"));  // one character, two bytes
    CHECK_FALSE(m("?.ts", "ab.ts"));
    CHECK_FALSE(m("a?b", "a/b"));
    CHECK(m("tsconfig*.json", "tsconfig.json"));
    CHECK(m("tsconfig*.json", "tsconfig.base.json"));
    CHECK_FALSE(m("tsconfig*.json", "tsconfig.json.bak"));
    CHECK(m("*a*b*c*", "xaybzc"));
    CHECK_FALSE(m("*a*b*c*", "xcybza"));
}

TEST_CASE("globstar ** is any depth, zero included, and dot directories too", "[workspace][glob]")
{
    CHECK(m("**/*.ts", "a.ts"));
    CHECK(m("**/*.ts", "x/.git/y/a.ts"));
    CHECK(m("src/**/*.ts", "src/a.ts"));
    CHECK(m("src/**/*.ts", "src/a/b/c.ts"));
    CHECK_FALSE(m("src/**/*.ts", "lib/src/a.ts"));
    CHECK(m("a/**/b/**/c", "a/b/c"));
    CHECK(m("a/**/b/**/c", "a/x/b/y/z/c"));
    CHECK_FALSE(m("a/**/b/**/c", "a/x/c"));
    CHECK(m("**/node_modules/**", "node_modules/x"));
    CHECK(m("**/node_modules/**", "a/node_modules/b/c"));
    CHECK_FALSE(m("**/node_modules/**", "a/node_modules"));
    // `a/**` does not match `a` itself (globset: "/**" at the end is "/.*"); Nx's fileset for a directory
    // writes `{projectRoot}/**/*`, which matches the same files.
    CHECK_FALSE(m("a/**", "a"));
    CHECK(m("a/**", "a/b"));
    CHECK_FALSE(m("a/**/*", "a"));
    CHECK(m("**", "anything/at/all"));
    CHECK(m("**/**", "x"));
    CHECK_FALSE(m("a/**/b", "ab"));
}

TEST_CASE("character classes", "[workspace][glob]")
{
    CHECK(m("[abc].ts", "b.ts"));
    CHECK_FALSE(m("[abc].ts", "d.ts"));
    CHECK(m("[a-z]1", "q1"));
    CHECK_FALSE(m("[a-z]1", "Q1"));
    CHECK(m("[!x]y", "ay"));
    CHECK_FALSE(m("[!x]y", "xy"));
    CHECK(m("[^x]y", "ay"));
    CHECK_FALSE(m("[^x]y", "xy"));
    CHECK(m("[]]", "]"));
    CHECK(m("[!]]", "a"));
    CHECK_FALSE(m("[!]]", "]"));
    CHECK(m("[\xc3\xa9\xc3\xa8]", "\xc3\xa8"));  // members are characters, not bytes
    CHECK(m("[.]env", ".env"));
    CHECK(m("[{(]x", "(x"));   // no syntax inside a class
    CHECK(m("[\\]x", "\\x"));  // and no escape either (globset)
    CHECK_FALSE(m("[abc]", "ab"));
}

TEST_CASE("braces: nested, with paths, no ranges", "[workspace][glob]")
{
    CHECK(m("*.{js,ts}", "a.ts"));
    CHECK_FALSE(m("*.{js,ts}", "a.css"));
    CHECK(m("{a,b{c,{d,e}}}.x", "be.x"));
    CHECK(m("{src,test/unit}/*.ts", "test/unit/a.ts"));
    CHECK_FALSE(m("{src,test/unit}/*.ts", "test/a.ts"));
    CHECK(m("x/{a/**,b}/y", "x/a/1/2/y"));
    CHECK(m("x/{a/**,b}/y", "x/b/y"));
    CHECK(m("{,.}env", ".env"));
    CHECK(m("{,.}env", "env"));
    // globset has no ranges: `{1..3}` is one alternative, the text "1..3".
    CHECK(m("file{1..3}.txt", "file1..3.txt"));
    CHECK_FALSE(m("file{1..3}.txt", "file2.txt"));
    CHECK(m("{a}", "a"));
    CHECK(m("a,b/{x}", "a,b/x"));
}

TEST_CASE("escapes", "[workspace][glob]")
{
    CHECK(m("\\*.ts", "*.ts"));
    CHECK_FALSE(m("\\*.ts", "a.ts"));
    CHECK(m("a\\?", "a?"));
    CHECK_FALSE(m("a\\?", "ab"));
    CHECK(m("\\[x]", "[x]"));
    CHECK(m("\\{a,b\\}", "{a,b}"));
    CHECK_FALSE(Glob::compile("\\{a,b}").ok());  // the '}' then closes nothing
    CHECK(m("a\\\\b", "a\\b"));
    CHECK(m("\\!x", "!x"));
    CHECK(m("\\@(x)", "@x"));  // a literal '@' before the bare group (x)
    CHECK(m("a\\/b", "a/b"));
    CHECK(m("\\\xc3\xa9", "\xc3\xa9"));
}

TEST_CASE("extglobs, each kind", "[workspace][glob]")
{
    CHECK(m("a?(b|c)d", "ad"));
    CHECK(m("a?(b|c)d", "abd"));
    CHECK_FALSE(m("a?(b|c)d", "abcd"));
    CHECK(m("a@(b|c)d", "acd"));
    CHECK_FALSE(m("a@(b|c)d", "ad"));
    // Nx rewrites `+(…)` to exactly one and `*(…)` to at most one (glob_transform.rs build_segment).
    CHECK(m("a+(b|c)d", "abd"));
    CHECK_FALSE(m("a+(b|c)d", "ad"));
    CHECK_FALSE(m("a+(b|c)d", "abbd"));
    CHECK(m("x/*(b|c)d", "x/d"));
    CHECK(m("x/*(b|c)d", "x/bd"));
    CHECK_FALSE(m("x/*(b|c)d", "x/bcd"));
    // `,` separates alternatives in a group as `|` does (Nx's separated_group_items).
    CHECK(m("*.@(js,ts)", "a.ts"));
    CHECK(m("*.stories.@(js|jsx|ts|tsx|mdx)", "Button.stories.mdx"));
    CHECK_FALSE(m("*.stories.@(js|jsx|ts|tsx|mdx)", "Button.stories.md"));
    CHECK(m("!(dist)/x", "src/x"));
    CHECK_FALSE(m("!(dist)/x", "dist/x"));
    CHECK(m("!(*.d).ts", "a.ts"));
    CHECK_FALSE(m("!(*.d).ts", "a.d.ts"));
    CHECK(m("!(a)*", "ba"));
    CHECK_FALSE(m("!(a)*", "ab"));
    CHECK(m("(a|b)", "b"));
    // Nested groups and classes inside groups.
    CHECK(m("*.+(spec|@(e2e|int)-test).[jt]s", "a.int-test.js"));
    CHECK(m("*.?([mc])js", "a.mjs"));
    CHECK(m("*.?([mc])js", "a.js"));
    CHECK_FALSE(m("*.?([mc])js", "a.xjs"));
    // `?`, `+`, `@`, `!` not followed by '(' are themselves ('?' the wildcard).
    CHECK(m("a+b@c!d", "a+b@c!d"));
    CHECK(m("x)y|z", "x)y|z"));
}

TEST_CASE("negation, trailing slash and the empty pattern", "[workspace][glob]")
{
    Glob neg = compiled("!**/*.spec.ts");
    CHECK(neg.negated());
    CHECK(neg.matches("a.ts"));
    CHECK_FALSE(neg.matches("x/a.spec.ts"));
    CHECK(m("!x", "y"));
    CHECK_FALSE(m("!!x", "!x"));  // one '!' negates, the next is a literal
    CHECK(m("!!x", "x"));
    CHECK_FALSE(compiled("!(x)").negated());
    // A trailing '/' means everything under (NxGlobSetBuilder::add_signed appends `**`).
    CHECK(m("dist/", "dist/a/b.js"));
    CHECK_FALSE(m("dist/", "dist"));
    CHECK_FALSE(m("dist/", "distx/a"));
    // The empty pattern compiles (Nx accepts it) and matches only the empty path, so no file.
    Glob empty = compiled("");
    CHECK_FALSE(empty.matches("a"));
    CHECK(empty.matches(""));
    CHECK(empty.is_literal());
    // Paths are not normalised: `./`, `//` and a leading '/' in a pattern match no workspace path, as in Nx.
    CHECK_FALSE(m("./libs/**", "libs/a"));
    CHECK_FALSE(m("libs//a/**", "libs/a/x"));
    CHECK_FALSE(m("/libs/**", "libs/a"));
    // Case matters.
    CHECK_FALSE(m("README.md", "readme.md"));
}

TEST_CASE("errors name the pattern, the column and what is wrong", "[workspace][glob]")
{
    CHECK(error_of("src/[a") ==
          "glob \"src/[a\": column 5: '[' opens a class that is never closed by ']' (write \\[ for a literal '[')");
    CHECK(error_of("a/{b,c") == "glob \"a/{b,c\": column 3: '{' is never closed by '}' (write \\{ for a literal '{')");
    CHECK(error_of("a}").find("column 2: '}' closes no '{'") != std::string::npos);
    CHECK(error_of("x/+(a|b").find("column 3: '+(' opens a group that is never closed") != std::string::npos);
    CHECK(error_of("x/@(a/b)").find("column 6: '/' inside a group") != std::string::npos);
    CHECK(error_of("\xc3\xa9/[z-a]").find("column 4: the range in the class is reversed") != std::string::npos);
    CHECK(error_of("a[b/c]").find("column 4: a class cannot match '/'") != std::string::npos);
    CHECK(error_of("a\\").find("column 2: '\\' at the end escapes nothing") != std::string::npos);
    CHECK(error_of("!{a").find("column 2:") != std::string::npos);  // columns count the '!'
    std::string many;
    for (int i = 0; i < 11; ++i)
        many += "!(x)/";
    CHECK(error_of(many + "y").find("more than 1024 alternatives") != std::string::npos);
}

TEST_CASE("literal prefix, literal globs and expansion", "[workspace][glob]")
{
    CHECK(compiled("packages/app/src/**/*.ts").literal_prefix() == "packages/app/src");
    CHECK(compiled("packages/*/src/**").literal_prefix() == "packages");
    CHECK(compiled("**/*.ts").literal_prefix().empty());
    CHECK(compiled("*.json").literal_prefix().empty());
    CHECK(compiled("dist/gen/").literal_prefix() == "dist/gen");
    CHECK(compiled("libs/a/x.ts").literal_prefix() == "libs/a/x.ts");
    CHECK(compiled("libs/a/x.ts").is_literal());
    CHECK_FALSE(compiled("libs/a/*.ts").is_literal());
    CHECK(compiled("libs/a/x.ts").names_path());
    CHECK_FALSE(compiled("libs/a/*.ts").names_path());
    CHECK_FALSE(compiled("!libs/a/x.ts").names_path());
    CHECK(compiled("libs/\\*/x").literal_prefix() == "libs/*/x");  // escapes resolved
    CHECK(compiled("apps/(marketing)/x/*.ts").literal_prefix() == "apps/marketing/x");
    CHECK(compiled("libs/{a,b}/x").literal_prefix() == "libs");
    CHECK(compiled("{libs/a/x,libs/a/y}/**").literal_prefix() == "libs/a");
    CHECK(compiled("!libs/a/**").literal_prefix().empty());
    CHECK(compiled("!libs/a/**").pattern() == "!libs/a/**");

    auto expansion = compiled("dist/!(cache|cache2)/**/!(README|LICENSE).(js|ts)").expansion();
    std::sort(expansion.begin(), expansion.end());
    // Exactly what nrwl/nx convert_glob returns for it (glob_transform.rs convert_globs_full_convert).
    CHECK(expansion == std::vector<std::string>{"!dist/*/**/{README,LICENSE}.{js,ts}", "!dist/{cache,cache2}/",
                                                "dist/*/**/*.{js,ts}"});
    CHECK(compiled("packages/!(package-a)*/package.json").expansion() ==
          std::vector<std::string>{"packages/*/package.json", "!packages/package-a*/"});
}

TEST_CASE("may_match_under prunes directories no match can be under", "[workspace][glob]")
{
    Glob g = compiled("packages/*/src/**/*.ts");
    CHECK(g.may_match_under(""));
    CHECK(g.may_match_under("packages"));
    CHECK(g.may_match_under("packages/a"));
    CHECK(g.may_match_under("packages/a/src/x/y"));
    CHECK_FALSE(g.may_match_under("packages/a/test"));
    CHECK_FALSE(g.may_match_under("apps"));
    CHECK(g.may_match_under("packages/a/src/x/y.ts/z"));  // a '**' reaches anything below
    Glob exact = compiled("libs/a/x.ts");
    CHECK(exact.may_match_under("libs/a"));
    CHECK_FALSE(exact.may_match_under("libs/a/x.ts"));
    CHECK_FALSE(exact.may_match_under("libs/b"));
    Glob ext = compiled("dist/!(cache)/**");
    CHECK(ext.may_match_under("dist/a"));
    CHECK_FALSE(ext.may_match_under("dist/cache"));
    CHECK_FALSE(compiled("!dist/**").may_match_under("dist"));
    CHECK(compiled("!dist/**").may_match_under("src"));
}

TEST_CASE("matching stays linear on patterns that make naive backtracking explode", "[workspace][glob]")
{
    std::string many_a(200, 'a');
    CHECK_FALSE(m("*a*a*a*a*a*a*a*a*a*a*b", many_a));
    CHECK(m("*a*a*a*a*a*a*a*a*a*a*a", many_a));
    std::string deep;
    for (int i = 0; i < 60; ++i)
        deep += "d/";
    CHECK_FALSE(m("**/d/**/d/**/d/**/d/**/d/**/x", deep + "y"));
    CHECK(m("**/d/**/d/**/d/**/d/**/d/**/x", deep + "x"));
}

TEST_CASE("groups that do not multiply out are searched in polynomial time", "[workspace][glob]")
{
    // Found by fuzz_glob: a component whose groups stand for more than 32 plain patterns (36 here), or hold
    // a `!(…)`, was matched by plain backtracking, which took minutes on a pattern of 40 characters.
    std::string many_a(200, 'a');
    std::string six = "{a,b,c,d,e,f}{a,b,c,d,e,f}";
    CHECK_FALSE(m(six + "*a*a*a*a*a*a*a*a*a*a*b", many_a));
    CHECK(m(six + "*a*a*a*a*a*a*a*a*a*a*a", many_a));
    CHECK(m(six + "*a*a*a*a*a*a*a*a*a*a*b", many_a + "b"));
    CHECK_FALSE(m(six + "*a*a*a*a*a*a*a*a*a*a*b", "ab" + many_a));
    // `!(…)` inside a brace is bash's: any text its alternatives do not match whole.
    CHECK(m("{x,!(*a*a*a*a*a*a*a*a*b)}", many_a));
    CHECK_FALSE(m("{x,!(*a*a*a*a*a*a*a*a*b)}", many_a + "b"));
    CHECK(m("{x,!(*a*a*a*a*a*a*a*a*b)}", "x"));
    // Nested, the negations cancel out: what the inner pattern matches, "y" excepted.
    CHECK(m("{x,!({y,!(*a*a*a*a*a*a*b)})}", many_a + "b"));
    CHECK_FALSE(m("{x,!({y,!(*a*a*a*a*a*a*b)})}", many_a));
    CHECK_FALSE(m("{x,!({y,!(*a*a*a*a*a*a*b)})}", "y"));
    CHECK(m("{x,!({y,!(*a*a*a*a*a*a*b)})}", "x"));
    // A group followed by more: the `!(…)` takes a run no alternative matches whole, then the rest.
    CHECK(m("{q,!(*a*a*a*a*a*a*b)}c", many_a + "c"));
    CHECK_FALSE(m("{q,!(*a*a*a*a*a*a*b)}c", "ab" + many_a + "bc"));
    CHECK(m("{q,!(*a*a*a*a*a*a*b)}c", "bc"));
    CHECK(m("{q,!(*a*a*a*a*a*a*b)}c", "qc"));
}

TEST_CASE("globs compiled again, past the memo's bound too, match as when first compiled", "[workspace][glob]")
{
    // Compiled globs are shared by pattern; the memo empties itself when full. Neither may change a match.
    for (int round = 0; round < 2; ++round)
        for (int i = 0; i < 40000; i += 97) {
            std::string dir = "packages/p" + std::to_string(i);
            auto g = qk::workspace::Glob::compile_fileset(dir + "/**/*");
            REQUIRE(g.ok());
            CHECK(g->matches(dir + "/src/a.ts"));
            CHECK_FALSE(g->matches("packages/q" + std::to_string(i) + "/src/a.ts"));
        }
    for (int i = 0; i < (1 << 15) + 10; ++i)  // more distinct patterns than the memo keeps
        REQUIRE(qk::workspace::Glob::compile("x" + std::to_string(i)).ok());
    auto again = qk::workspace::Glob::compile_fileset("packages/p0/**/*");
    REQUIRE(again.ok());
    CHECK(again->matches("packages/p0/src/a.ts"));
    CHECK(again->pattern() == "packages/p0/**/*");
    // The same text as a glob and as a fileset are different globs: a plain path is a file or a tree.
    auto plain = qk::workspace::Glob::compile("dist");
    auto tree = qk::workspace::Glob::compile_fileset("dist");
    REQUIRE((plain.ok() && tree.ok()));
    CHECK_FALSE(plain->matches("dist/a.js"));
    CHECK(tree->matches("dist/a.js"));
}
