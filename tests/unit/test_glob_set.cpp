// GlobSet: how Nx matches one group of filesets (NxGlobSet::is_match, nrwl/nx packages/nx/src/native/glob.rs),
// with the test cases of that file and of the native fileset code (glob_transform.rs path_or_everything_under,
// tasks/hashers/fileset match_file_map tests).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "qk/workspace/glob.hpp"

using qk::workspace::Glob;
using qk::workspace::GlobSet;

namespace {

GlobSet set_of(std::initializer_list<std::string_view> patterns)
{
    auto s = GlobSet::compile(patterns);
    REQUIRE(s.ok());
    return std::move(*s);
}

GlobSet fileset_of(std::initializer_list<std::string_view> patterns)
{
    auto s = GlobSet::compile_fileset(patterns);
    REQUIRE(s.ok());
    return std::move(*s);
}

}  // namespace

TEST_CASE("a group matches when a positive does and no negative does, in any order", "[workspace][glob][glob-set]")
{
    GlobSet a = set_of({"!nested/ignore/", "nested/"});
    GlobSet b = set_of({"nested/", "!nested/ignore/"});
    for (const GlobSet* s : {&a, &b}) {
        CHECK_FALSE(s->matches("file.map"));
        CHECK_FALSE(s->matches("nested/ignore/file.js"));
        CHECK_FALSE(s->matches("another-nested/nested/file.ts"));
        CHECK(s->matches("nested/file.js"));
        CHECK(s->matches("nested/nested/file.ts"));
    }
    GlobSet css = set_of({"nested/", "!nested/*.{css,map}"});
    CHECK(css.matches("nested/file.js"));
    CHECK_FALSE(css.matches("nested/file.css"));
    CHECK_FALSE(css.matches("nested/file.map"));
    CHECK(css.matches("nested/deeper/file.css"));
    GlobSet deep = set_of({"!nested/**/ignore/", "nested/**"});
    CHECK(deep.matches("nested/nested/file.js"));
    CHECK_FALSE(deep.matches("nested/ignore/file.ts"));
    CHECK_FALSE(deep.matches("nested/nested/ignore/file.ts"));
    GlobSet two = set_of({"nested/", "doesnt-exist/"});
    CHECK(two.matches("nested/file.js"));
    CHECK_FALSE(two.matches("file.js"));
}

TEST_CASE("a group of negations only means everything except, and the empty group everything",
          "[workspace][glob][glob-set]")
{
    GlobSet neg = set_of({"!test/*.spec.ts"});
    CHECK_FALSE(neg.matches("test/file.spec.ts"));
    CHECK(neg.matches("test/file.ts"));
    CHECK(neg.matches("src/a.spec.ts"));
    CHECK(GlobSet().matches("x.ts"));
    CHECK(set_of({}).matches("x.ts"));
    // One empty pattern is a positive that matches no path: nothing (glob.rs no_globs_and_one_empty_glob...).
    CHECK_FALSE(set_of({""}).matches("x.ts"));
    CHECK_FALSE(fileset_of({""}).matches("x.ts"));
}

TEST_CASE("an extglob's exclusion excludes across the whole group", "[workspace][glob][glob-set]")
{
    // nrwl/nx tasks/hashers fileset tests: each converted glob joins the group, so the `!(*.module)` part of
    // the first entry removes a.module.ts even though the second entry names it.
    GlobSet s = set_of({"libs/x/src/lib/!(*.module).ts", "libs/x/src/lib/*.ts"});
    CHECK(s.matches("libs/x/src/lib/a.ts"));
    CHECK_FALSE(s.matches("libs/x/src/lib/a.module.ts"));
    // And a directory exclusion from one entry removes that tree from the others.
    GlobSet dirs = set_of({"dist/!(cache)/**", "dist/**/*.map"});
    CHECK(dirs.matches("dist/a/x.map"));
    CHECK_FALSE(dirs.matches("dist/cache/x.map"));
    // A negated glob excludes all it names, extglob branches included: `!a/!(b)/c` drops a/*/c and a/b/.
    GlobSet double_neg = set_of({"a/**", "!a/!(b)/c"});
    CHECK_FALSE(double_neg.matches("a/x/c"));
    CHECK_FALSE(double_neg.matches("a/b/z"));
    CHECK(double_neg.matches("a/x/z"));
}

TEST_CASE("nx glob.rs: simple, nested and root-anchored globs", "[workspace][glob][glob-set]")
{
    CHECK(set_of({"**/*"}).matches("packages/nx/package.json"));
    CHECK(set_of({"test/*.spec.ts"}).matches("test/file.spec.ts"));
    CHECK_FALSE(set_of({"test/*.spec.ts"}).matches("test/file.ts"));
    CHECK(set_of({"packages/*/package.json"}).matches("packages/nx/package.json"));
    CHECK_FALSE(set_of({"packages/*/package.json"}).matches("packages/nx/test-files/package.json"));
    CHECK(set_of({"packages/**/package.json"}).matches("packages/nx/test-files/package.json"));
    GlobSet nm = set_of({"**/node_modules"});
    CHECK(nm.matches("node_modules"));
    CHECK(nm.matches("packages/nx/node_modules"));
    GlobSet cargo = set_of({"*/**/Cargo.toml"});
    CHECK(cargo.matches("packages/a/Cargo.toml"));
    CHECK(cargo.matches("a/Cargo.toml"));
    CHECK_FALSE(cargo.matches("Cargo.toml"));
    CHECK(set_of({"**/*.d.ts"}).matches("dist/libs/dep/index.d.ts"));
    CHECK_FALSE(set_of({"**/*.d.ts"}).matches("dist/libs/dep/index.js"));
}

TEST_CASE("nx glob.rs: complex and extglob patterns", "[workspace][glob][glob-set]")
{
    GlobSet s = set_of({"dist/!(cache|cache2)/**/!(README|LICENSE).(txt|md)"});
    CHECK(s.matches("dist/nested/file.txt"));
    CHECK(s.matches("dist/nested/file.md"));
    CHECK(s.matches("dist/nested/doublenested/triplenested/file.txt"));
    for (const char* no :
         {"dist/file.txt", "dist/cache/nested/README.txt", "dist/nested/LICENSE.md", "dist/cache/file.txt",
          "dist/cache2/file.txt", "dist/cache2/README.txt", "dist/LICENSE.md", "dist/README.txt"}) {
        INFO(no);
        CHECK_FALSE(s.matches(no));
    }
    GlobSet main = set_of({"dist/**/!(main).(js|ts)"});
    CHECK(main.matches("dist/file.js"));
    CHECK_FALSE(main.matches("dist/main.js"));

    GlobSet ext = set_of({"**/*.*(component,module).ts?(x)"});
    for (const char* yes : {"test.component.ts", "test.module.ts", "test.component.tsx", "test.module.tsx",
                            "nested/comp.test.component.ts", "nested/comp.test.module.tsx"}) {
        INFO(yes);
        CHECK(ext.matches(yes));
    }
    for (const char* no :
         {"test.ts", "test.component.spec.ts", "test.module.spec.tsx", "nested/comp.test.component.spec.ts"}) {
        INFO(no);
        CHECK_FALSE(ext.matches(no));
    }
    GlobSet spec = set_of({"**/?(*.)+(spec|test).[jt]s?(x)?(.snap)"});
    for (const char* dir : {"packages/package-a/", ""})
        for (const char* name : {"spec", "file.spec"})
            for (const char* ext : {".js", ".jsx", ".ts", ".tsx", ".js.snap", ".jsx.snap", ".ts.snap", ".tsx.snap"}) {
                std::string path = std::string(dir) + name + ext;
                INFO(path);
                CHECK(spec.matches(path));
            }
    CHECK_FALSE(spec.matches("packages/package-a/spec.jsx.snapx"));
    CHECK_FALSE(spec.matches("packages/package-a/spec.js.snapx"));
    CHECK_FALSE(spec.matches("packages/package-a/file.ts"));
}

TEST_CASE("nx glob.rs: braces, escapes and malformed extglobs", "[workspace][glob][glob-set]")
{
    GlobSet dirs = set_of({"{packages,apps}/*"});
    CHECK(dirs.matches("packages/package-a"));
    CHECK(dirs.matches("apps/app-a"));
    CHECK_FALSE(dirs.matches("apps/app-a/nested"));
    GlobSet locks = set_of({"{package-lock.json,yarn.lock,pnpm-lock.yaml}"});
    CHECK(locks.matches("pnpm-lock.yaml"));
    CHECK_FALSE(locks.matches("bun.lockb"));
    GlobSet split = set_of({"{packages/!(package-a)*/package.json,packages/*/package.json}"});
    CHECK(split.matches("packages/package-b/package.json"));
    CHECK_FALSE(split.matches("packages/package-a/package.json"));
    GlobSet vite = set_of({"{src,tests}/**/*.{test,spec}.{js,mjs,cjs,ts,mts,cts,jsx,tsx}"});
    CHECK(vite.matches("src/a.spec.ts"));
    CHECK(vite.matches("tests/b.test.tsx"));
    CHECK(vite.matches("src/deep/c.spec.mts"));
    CHECK_FALSE(vite.matches("src/helper.ts"));
    CHECK_FALSE(vite.matches("lib/a.spec.ts"));

    GlobSet bs = set_of({"libs/a\\\\b/**", "x\\\\(y)"});
    CHECK(bs.matches("libs/a\\b/c.ts"));
    CHECK_FALSE(bs.matches("libs/a/b/c.ts"));
    CHECK(bs.matches("x\\y"));  // `\\(` is a literal '\' and then a real group
    CHECK(set_of({"libs/a\\{,b\\}/x.ts"}).matches("libs/a{,b}/x.ts"));
    CHECK_FALSE(set_of({"libs/a\\{,b\\}/x.ts"}).matches("libs/a/x.ts"));
    CHECK(set_of({"app/\\(marketing\\)/**"}).matches("app/(marketing)/page.tsx"));
    CHECK_FALSE(set_of({"app/\\(marketing\\)/**"}).matches("app/marketing/page.tsx"));
    GlobSet cls = set_of({"app/[(]marketing[)]/**"});
    CHECK(cls.matches("app/(marketing)/page.tsx"));
    CHECK_FALSE(cls.matches("app/xmarketingx/page.tsx"));
    CHECK_FALSE(cls.matches("app/marketing/page.tsx"));

    GlobSet bad = set_of({"libs/**/*", "!libs/**/?(*.)+spec.ts?(.snap)", "!libs/tsconfig.spec.json"});
    CHECK(bad.matches("libs/src/index.ts"));
    CHECK(bad.matches("libs/src/index.spec.ts"));  // `+spec.ts` names a file called that
    CHECK_FALSE(bad.matches("libs/src/index.+spec.ts"));
    GlobSet good = set_of({"libs/**/*", "!libs/**/?(*.)+(spec|test).[jt]s?(x)?(.snap)"});
    CHECK_FALSE(good.matches("libs/a/b.spec.ts"));
    CHECK_FALSE(good.matches("libs/a/b.test.tsx"));
    CHECK(good.matches("libs/a/b.ts"));
    GlobSet scoped = set_of({"dist/**", "!dist/libs/@scope/pkg/.cache/**"});
    CHECK(scoped.matches("dist/libs/@scope/pkg/index.js"));
    CHECK_FALSE(scoped.matches("dist/libs/@scope/pkg/.cache/x"));
}

TEST_CASE("every escaped literal path matches only itself", "[workspace][glob][glob-set]")
{
    // glob.rs every_escaped_literal_path_matches_only_itself, with the escaping of escape_glob_literal.
    auto escape = [](std::string_view path) {
        std::string out;
        for (char c : path) {
            if (std::string_view("\\*?[]{}()!").find(c) != std::string_view::npos)
                out += '\\';
            out += c;
        }
        return out;
    };
    for (const char* name :
         {"(group)", "a(b",   "a)b",    "!name", "a!b",   "!(x)", "?(x)", "+(x)", "@(x)",
          "*(x)",    "a+(b)", "@scope", "a{,b}", "{a,b}", "a,b",  "a|b",  "[id]", "[!x]",
          "a*b",     "a?b",   "a\\b",   "a\\(b", "{,",    "}",    "]",    "a b",  "\xe9\x9b\xaa(x)"}) {
        std::string path = std::string("libs/") + name + "/x.ts";
        std::string pattern = escape(path);
        INFO(pattern);
        auto g = Glob::compile(pattern);
        REQUIRE(g.ok());
        CHECK(g->matches(path));
        CHECK_FALSE(g->matches("libs/x/x.ts"));
        CHECK(g->is_literal());
        CHECK(g->literal_prefix() == path);
    }
}

TEST_CASE("a fileset path with no pattern names that file or everything under it", "[workspace][glob][glob-set]")
{
    // glob_transform.rs a_path_without_glob_syntax_also_means_everything_under_it, and the fileset tests.
    auto src = Glob::compile_fileset("libs/app/src");
    REQUIRE(src.ok());
    CHECK(src->expansion() == std::vector<std::string>{"libs/app/src", "libs/app/src/**"});
    CHECK(src->matches("libs/app/src"));
    CHECK(src->matches("libs/app/src/a/b.ts"));
    CHECK_FALSE(src->matches("libs/app/srcs/b.ts"));
    auto neg = Glob::compile_fileset("!libs/app/src");
    REQUIRE(neg.ok());
    CHECK(neg->expansion() == std::vector<std::string>{"!libs/app/src", "!libs/app/src/**"});
    CHECK_FALSE(neg->matches("libs/app/src/a.ts"));
    CHECK(neg->matches("libs/app/x.ts"));
    for (const char* untouched : {"libs/app/**/*.ts", "libs/app/src/", "*.json", "(a)"}) {
        auto g = Glob::compile_fileset(untouched);
        REQUIRE(g.ok());
        INFO(untouched);
        CHECK(g->expansion().size() == 1);
    }
    // Plain Glob::compile keeps a literal pattern to that one path.
    auto plain = Glob::compile("libs/app/src");
    REQUIRE(plain.ok());
    CHECK_FALSE(plain->matches("libs/app/src/a.ts"));

    GlobSet virt = fileset_of({"virtual", "!virtual/**/*.spec.ts"});
    CHECK(virt.matches("virtual/a.ts"));
    CHECK(virt.matches("virtual/c/d.ts"));
    CHECK_FALSE(virt.matches("virtual/b.spec.ts"));
    CHECK(fileset_of({"virtual/a.ts"}).matches("virtual/a.ts"));
    CHECK_FALSE(fileset_of({"virtual/a.ts/**"}).matches("virtual/a.ts"));
    GlobSet all_but = fileset_of({"!virtual/c/**"});
    CHECK(all_but.matches("virtual/a.ts"));
    CHECK_FALSE(all_but.matches("virtual/c/d.ts"));
}

TEST_CASE("a group's literal prefix and walk pruning", "[workspace][glob][glob-set]")
{
    CHECK(set_of({"libs/a/src/**/*.ts", "libs/a/test/**"}).literal_prefix() == "libs/a");
    CHECK(set_of({"libs/a/**", "!libs/a/x/**"}).literal_prefix() == "libs/a");
    CHECK(set_of({"libs/a/**", "apps/b/**"}).literal_prefix().empty());
    CHECK(set_of({"!libs/a/**"}).literal_prefix().empty());
    CHECK(set_of({"e2e/深/左/**/+(*.)+(spec|test).+(ts|js)?(x)", "e2e/深/右/**"}).literal_prefix() == "e2e/深");

    GlobSet s = set_of({"dist/!(cache)/**", "!dist/tmp/", "!dist/**/.git/**"});
    CHECK(s.may_match_under(""));
    CHECK(s.may_match_under("dist"));
    CHECK(s.may_match_under("dist/a/b"));
    CHECK_FALSE(s.may_match_under("dist/cache"));
    CHECK_FALSE(s.may_match_under("dist/cache/x"));
    CHECK_FALSE(s.may_match_under("dist/tmp"));
    CHECK_FALSE(s.may_match_under("dist/a/.git"));
    CHECK_FALSE(s.may_match_under("src"));
    CHECK(set_of({"!dist/**"}).may_match_under("src"));
    CHECK_FALSE(set_of({"!dist/**"}).may_match_under("dist"));
}
