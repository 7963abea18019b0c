// gitignore matching: wildmatch and pattern parsing on their own, then agreement with real
// `git check-ignore` on a repository full of tricky patterns and paths.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "key/index/ignore_rules.hpp"

using qk::key::IgnoreFile;
using qk::key::IgnoreStack;
using qk::key::wildmatch;
namespace fs = std::filesystem;

using qk::test::TempDir;

namespace {


void write(const fs::path& p, const std::string& text)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

IgnoreFile::Verdict verdict(const std::string& rules, std::string_view path, bool is_dir = false)
{
    auto slash = path.rfind('/');
    std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
    return IgnoreFile::parse(rules).match(path, base, is_dir);
}

bool ignored(const std::string& rules, std::string_view path, bool is_dir = false)
{
    return verdict(rules, path, is_dir) == IgnoreFile::Verdict::ignore;
}

}  // namespace

TEST_CASE("wildmatch: *, ?, brackets and ** as git has them", "[key][files]")
{
    CHECK(wildmatch("*.c", "a.c"));
    CHECK_FALSE(wildmatch("*.c", "d/a.c"));
    CHECK_FALSE(wildmatch("a?c", "a/c"));
    CHECK(wildmatch("**/a.c", "a.c"));
    CHECK(wildmatch("**/a.c", "x/y/a.c"));
    CHECK(wildmatch("x/**/y", "x/y"));
    CHECK(wildmatch("x/**/y", "x/a/b/y"));
    CHECK(wildmatch("x/**", "x/a/b"));
    CHECK_FALSE(wildmatch("x**y", "x/y"));  // not between slashes: just two stars
    CHECK(wildmatch("[a-c]x", "bx"));
    CHECK_FALSE(wildmatch("[!a-c]x", "bx"));
    CHECK(wildmatch("[^a-c]x", "dx"));
    CHECK(wildmatch("[]]", "]"));
    CHECK(wildmatch("[a-]", "-"));
    CHECK(wildmatch("[[:digit:]]", "7"));
    CHECK_FALSE(wildmatch("[[:digit:]]", "x"));
    CHECK_FALSE(wildmatch("[[:nope:]]", "x"));  // an unknown class matches nothing
    CHECK_FALSE(wildmatch("[/]", "/"));
    CHECK(wildmatch("\\*", "*"));
    CHECK_FALSE(wildmatch("\\*", "a"));
    CHECK_FALSE(wildmatch("a\\", "a"));  // a trailing backslash matches nothing
    CHECK(wildmatch("{a,b}", "{a,b}"));  // braces are plain characters
    CHECK(wildmatch("+(a)", "+(a)"));    // and so are extglobs
}

TEST_CASE("gitignore parsing: comments, escapes, spaces, negation, directories, anchoring", "[key][files]")
{
    CHECK_FALSE(ignored("# x\n\n", "# x"));
    CHECK(ignored("\\#x\n", "#x"));
    CHECK(ignored("\\!x\n", "!x"));
    CHECK(ignored("x   \n", "x"));
    CHECK_FALSE(ignored("x\\ \n", "x"));
    CHECK(ignored("x\\ \n", "x "));
    CHECK(ignored("\xEF\xBB\xBFx\r\ny\r\n", "x"));
    CHECK(ignored("\xEF\xBB\xBFx\r\ny\r\n", "y"));
    CHECK(ignored("y", "y"));  // no final newline
    CHECK(verdict("*.log\n!keep.log\n", "keep.log") == IgnoreFile::Verdict::keep);
    CHECK(verdict("!keep.log\n*.log\n", "keep.log") == IgnoreFile::Verdict::ignore);  // the last one wins
    CHECK(verdict("a\n", "b") == IgnoreFile::Verdict::none);
    CHECK_FALSE(ignored("build/\n", "build"));
    CHECK(ignored("build/\n", "build", true));
    CHECK(ignored("build/\n", "src/build", true));  // no inner slash: any depth
    CHECK(ignored("/build\n", "build"));
    CHECK_FALSE(ignored("/build\n", "src/build"));
    CHECK(ignored("doc/*.txt\n", "doc/a.txt"));
    CHECK_FALSE(ignored("doc/*.txt\n", "src/doc/a.txt"));  // an inner slash anchors it
    CHECK_FALSE(ignored("doc/*.txt\n", "doc/x/a.txt"));
    CHECK(ignored("foo**/qux\n", "foox/y/qux"));  // git compares "foo" first, then "**/qux" leads
}

TEST_CASE("the ignore stack: deeper files override shallower ones; .nxignore outranks .gitignore", "[key][files]")
{
    IgnoreStack stack;
    IgnoreStack::Files root, sub;
    root[std::size_t(qk::key::IgnoreSource::gitignore)] = IgnoreFile::parse("*.log\n");
    root[std::size_t(qk::key::IgnoreSource::git_exclude)] = IgnoreFile::parse("!*.log\n*.tmp\n");
    sub[std::size_t(qk::key::IgnoreSource::gitignore)] = IgnoreFile::parse("!debug.log\n/local\n");
    sub[std::size_t(qk::key::IgnoreSource::nxignore)] = IgnoreFile::parse("kept-by-git\n!a.tmp\n");
    stack.push(0, std::move(root));
    CHECK(stack.ignored("x.log", "x.log", false));  // .gitignore outranks .git/info/exclude
    CHECK(stack.ignored("x.tmp", "x.tmp", false));
    stack.push(4, std::move(sub));  // "pkg/"
    CHECK_FALSE(stack.ignored("pkg/debug.log", "debug.log", false));
    CHECK(stack.ignored("pkg/other.log", "other.log", false));
    CHECK(stack.ignored("pkg/local", "local", false));
    CHECK(stack.ignored("pkg/kept-by-git", "kept-by-git", false));
    CHECK_FALSE(stack.ignored("pkg/a.tmp", "a.tmp", false));  // .nxignore's ! beats exclude
    stack.pop();
    CHECK(stack.ignored("pkg/debug.log", "debug.log", false));
}

namespace {

// The tree of the conformance test: ignore files, then every name in every directory.
const std::map<std::string, std::string> conformance_rules = {
    {".gitignore", "# a comment\n"
                   "\\#hash\n"
                   "\\!bang\n"
                   "trailing   \n"
                   "escaped\\ \n"
                   "*.log\n"
                   "!keep.log\n"
                   "build/\n"
                   "/rooted\n"
                   "doc/*.txt\n"
                   "doc/**/*.pdf\n"
                   "**/deep\n"
                   "a/**/z\n"
                   "**/foo/bar\n"
                   "foo**/qux\n"
                   "ba?.c\n"
                   "[abc]x.c\n"
                   "[!a-c]y.c\n"
                   "[^d]w.c\n"
                   "[a-]dash\n"
                   "[]]bracket\n"
                   "[[:digit:]]num\n"
                   "[[:alpha:][:digit:]]mix\n"
                   "[[:bogus:]]bogus\n"
                   "*.tmp/\n"
                   "sub/\n"
                   "!sub/keepdir/\n"
                   "x/*\n"
                   "!x/y\n"
                   "abc/**\n"
                   "/onlydir/\n"
                   "nested/deeper/file\n"
                   "\\*star\n"
                   "star\\*\n"
                   "q[?]\n"
                   "temp*\n"
                   "{a,b}\n"
                   "*.[oa]\n"
                   "!lib.a\n"
                   "mid*dle\n"
                   "a/b/\n"
                   "!a/b/c\n"
                   "***/stars\n"
                   "a/*/c\n"
                   "x/**/\n"
                   "**/mid*/c\n"
                   "foox/**/*y*\n"
                   "**/q/**\n"
                   "[[:upper:]]*.LOG\n"},
    {"pkg/.gitignore", "\xEF\xBB\xBF/local\r\n"
                       "*.gen\r\n"
                       "!important.gen\r\n"
                       "sub/inner\r\n"
                       "!debug.log\r\n"
                       "!temp1\n"
                       "**/z\n"
                       "!x.o\n"
                       "*/inner\n"
                       "**/keep/\n"
                       "!**/keep/\n"
                       "s?b/*.gen\n"},
    {"pkg/keep/.gitignore", "!*.log\nkeep.log\n/temp2\n"},
    {"doc/x/.gitignore", "*\n!*.pdf\n!*/\n"},
    {".git/info/exclude", "excluded\n*.info\n!*.log\n!temp3\n"},
};

const std::vector<std::string> conformance_dirs = {
    "",           "doc/",   "doc/x/", "doc/x/y/",     "a/",       "a/b/",           "a/b/c/",
    "a/q/",       "foo/",   "foox/",  "foox/y/",      "pkg/",     "pkg/sub/",       "pkg/keep/",
    "pkg/build/", "x/",     "x/y/",   "x/z/",         "abc/",     "onlydir/",       "src/onlydir/",
    "deep/",      "build/", "sub/",   "sub/keepdir/", "dir.tmp/", "nested/deeper/", "{a,b}/",
    "middle/",
};

const std::vector<std::string> conformance_names = {
    "a.log",   "keep.log",  "debug.log", "#hash",         "!bang",     "trailing", "trailing  ", "escaped ",
    "escaped", "rooted",    "bar.c",     "ba.c",          "ax.c",      "dx.c",     "ay.c",       "dy.c",
    "dw.c",    "ew.c",      "adash",     "-dash",         "bdash",     "]bracket", "5num",       "xnum",
    "amix",    "7mix",      "_mix",      "1bogus",        "*star",     "xstar",    "star*",      "stars",
    "q?",      "qx",        "x.tmp",     "important.gen", "other.gen", "local",    "temp1",      "temp2",
    "temp3",   "plain.txt", "file.pdf",  "deep",          "bar",       "qux",      "inner",      "z",
    "Z.LOG",   "excluded",  "n.info",    "file",          "x.o",       "lib.a",    "lib.b",      "{a,b}",
    "a",       "b",         "mid-dle",   "middle",        "c",         "y",
};


// Whether the walker would leave `path` out: an ancestor directory or the path itself ignored by the
// files in force at its level (those of its ancestors), as git decides before entering a directory.
bool walker_ignores(const std::string& path, bool is_dir)
{
    IgnoreStack stack;
    auto rules_of = [](const std::string& dir) {
        IgnoreStack::Files files;
        if (auto it = conformance_rules.find(dir + ".gitignore"); it != conformance_rules.end())
            files[std::size_t(qk::key::IgnoreSource::gitignore)] = IgnoreFile::parse(it->second);
        if (dir.empty())
            files[std::size_t(qk::key::IgnoreSource::git_exclude)] =
                IgnoreFile::parse(conformance_rules.at(".git/info/exclude"));
        return files;
    };
    std::size_t start = 0;
    for (;;) {
        std::string dir = path.substr(0, start);
        stack.push(dir.size(), rules_of(dir));
        std::size_t slash = path.find('/', start);
        bool last = slash == std::string::npos;
        std::string prefix = last ? path : path.substr(0, slash);
        if (stack.ignored(prefix, std::string_view(prefix).substr(start), last ? is_dir : true))
            return true;
        if (last)
            return false;
        start = slash + 1;
    }
}

}  // namespace

TEST_CASE("gitignore matching agrees with git check-ignore on every path of a tricky tree", "[key][files]")
{
    TempDir tmp;
    fs::path repo = tmp.path / "repo";
    fs::create_directories(repo);
    REQUIRE(qk::test::shell_output("cd '" + repo.string() + "' && git init -q . 2>&1").empty());
    for (const auto& [file, text] : conformance_rules)
        write(repo / file, text);

    std::vector<std::pair<std::string, bool>> paths;  // path, is_dir
    std::set<std::string> dirs;                       // every directory of the tree, ancestors included, checked too
    for (const std::string& dir : conformance_dirs)
        for (std::size_t i = dir.find('/'); i != std::string::npos; i = dir.find('/', i + 1))
            dirs.insert(dir.substr(0, i));
    for (const std::string& dir : dirs) {
        fs::create_directories(repo / dir);
        paths.emplace_back(dir, true);
    }
    for (const std::string& dir : conformance_dirs) {
        for (const std::string& name : conformance_names) {
            if (dirs.count(dir + name))
                continue;  // a directory of that name is there
            write(repo / (dir + name), "x");
            paths.emplace_back(dir + name, false);
        }
    }

    std::string list;
    for (const auto& [p, is_dir] : paths)
        list += p + '\0';
    write(tmp.path / "paths", list);
    // No user or system configuration: no core.excludesFile but the repository's own rules.
    std::string out =
        qk::test::shell_output("cd '" + repo.string() + "' && HOME='" + tmp.path.string() + "' XDG_CONFIG_HOME='" + tmp.path.string() +
            "' GIT_CONFIG_NOSYSTEM=1 git check-ignore --no-index -v -n -z --stdin < '" + (tmp.path / "paths").string() +
            "'");

    // Records of four NUL-terminated fields: source, line, pattern, path (empty source: no match).
    std::map<std::string, bool> git_ignores;
    std::vector<std::string> fields;
    for (std::size_t pos = 0; pos < out.size();) {
        std::size_t end = out.find('\0', pos);
        REQUIRE(end != std::string::npos);
        fields.push_back(out.substr(pos, end - pos));
        pos = end + 1;
    }
    REQUIRE(fields.size() == 4 * paths.size());
    for (std::size_t i = 0; i < fields.size(); i += 4)
        git_ignores[fields[i + 3]] = !fields[i + 2].empty() && fields[i + 2][0] != '!';
    REQUIRE(git_ignores.size() == paths.size());

    std::size_t ignored_count = 0;
    for (const auto& [p, is_dir] : paths) {
        INFO("path " << p << (is_dir ? " (a directory)" : ""));
        REQUIRE(git_ignores.count(p) == 1);
        CHECK(walker_ignores(p, is_dir) == git_ignores[p]);
        ignored_count += git_ignores[p];
    }
    // The tree exercises both outcomes in bulk.
    CHECK(ignored_count > paths.size() / 10);
    CHECK(paths.size() - ignored_count > paths.size() / 10);
}
