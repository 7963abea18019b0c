// Scratch directories: entries resolved and refused, the rules checked on disk and across tasks, and
// emptying that deletes only what lies inside the directory, whatever links stand in or around it.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "qk/run/scratch.hpp"

namespace fs = std::filesystem;
using namespace qk::run;
using Catch::Matchers::Contains;
using qk::workspace::Project;
using qk::workspace::Target;
using qk::workspace::Workspace;
using Strings = std::vector<std::string>;

namespace {

// A workspace in ws/ with a directory outside it, out/, for links to point at; removed whole at the end.
struct TempWorkspace {
    fs::path base, root, outside;
    TempWorkspace()
    {
        static int n = 0;
        base = fs::temp_directory_path() / ("qk-scratch-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
        fs::remove_all(base);
        root = base / "ws";
        outside = base / "out";
        fs::create_directories(root);
        fs::create_directories(outside);
        write("nx.json", "{}");
    }
    ~TempWorkspace()
    {
        // Read-only directories left by a test would stop remove_all when not running as root.
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(base, ec); !ec && it != fs::recursive_directory_iterator();
             it.increment(ec))
            if (it->is_directory(ec) && !it->is_symlink(ec))
                fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(base, ec);
    }
    void write(const fs::path& rel, const std::string& text, const fs::path& at = {}) const
    {
        fs::path p = (at.empty() ? root : at) / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    }
    void project(const std::string& dir, const std::string& name) const
    {
        write(fs::path(dir) / "project.json", "{ \"name\": \"" + name + "\", \"targets\": {} }");
    }
    Workspace load() const
    {
        auto ws = Workspace::load(root);
        INFO((ws.ok() ? std::string() : ws.error().message));
        REQUIRE(ws.ok());
        return std::move(*ws);
    }
};

Project project_at(const std::string& root, const std::string& name)
{
    Project p;
    p.root = root;
    p.name = name;
    return p;
}

Target lint(Strings scratch)
{
    Target t;
    t.name = "lint";
    t.sandbox.scratch = std::move(scratch);
    return t;
}

Strings resolved(const Project& p, Strings scratch)
{
    auto r = resolve_scratch(Workspace{}, p, lint(std::move(scratch)));
    INFO((r.ok() ? std::string() : r.error().message));
    REQUIRE(r.ok());
    return *r;
}

// The refusal's message for one entry of a:lint (packages/a).
std::string refusal(const std::string& entry, const Project& p = project_at("packages/a", "a"))
{
    auto r = resolve_scratch(Workspace{}, p, lint({entry}));
    INFO(entry);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Contains(p.name + ":lint") && Contains("\"" + entry + "\""));
    return r.error().message;
}

std::string failure(const qk::Status& s)
{
    REQUIRE_FALSE(s.ok());
    return s.error().message;
}

}  // namespace

TEST_CASE("scratch: tokens resolve to workspace-relative normalised paths", "[run][scratch]")
{
    Project a = project_at("packages/a", "a");
    CHECK(resolved(a, {"{projectRoot}/.tool-cache", "{workspaceRoot}/tmp/{projectName}", "{workspaceRoot}/./x//y/",
                       "{projectRoot}/../a/c", "{projectRoot}/.tool-cache", "out/{projectRoot}"}) ==
          Strings{"packages/a/.tool-cache", "tmp/a", "x/y", "packages/a/c", "out/packages/a"});
    CHECK(resolved(a, {}).empty());

    // The root project's "{projectRoot}/" is dropped wherever it stands.
    Project root = project_at(".", "root");
    CHECK(resolved(root, {"{projectRoot}/.cache", "dist/{projectRoot}/x", "{projectRoot}/{projectName}"}) ==
          Strings{".cache", "dist/x", "root"});
}

TEST_CASE("scratch: entries outside the workspace or naming its root are refused", "[run][scratch]")
{
    CHECK_THAT(refusal("/tmp/cache"), Contains("absolute path"));
    CHECK_THAT(refusal("{workspaceRoot}/../x"), Contains("leaves the workspace"));
    CHECK_THAT(refusal("{projectRoot}/../../../x"), Contains("leaves the workspace"));
    CHECK_THAT(refusal("{workspaceRoot}"), Contains("workspace root itself"));
    CHECK_THAT(refusal("{workspaceRoot}/"), Contains("workspace root itself"));
    CHECK_THAT(refusal("{projectRoot}/../.."), Contains("workspace root itself"));
    CHECK_THAT(refusal(""), Contains("workspace root itself"));
    CHECK_THAT(refusal("{projectRoot}", project_at(".", "root")), Contains("workspace root itself"));
    CHECK_THAT(refusal("x/{workspaceRoot}/y"), Contains("may only start"));
    CHECK_THAT(refusal("{workspaceRoot}tmp"), Contains("/ after {workspaceRoot}"));
}

TEST_CASE("scratch: .git, .qk and node_modules are refused however cased", "[run][scratch]")
{
    CHECK_THAT(refusal("{workspaceRoot}/.git/x"), Contains("lies in .git"));
    CHECK_THAT(refusal("{projectRoot}/.Git"), Contains("lies in .git (\".Git\")"));
    CHECK_THAT(refusal("{workspaceRoot}/.QK"), Contains("lies in .qk"));
    CHECK_THAT(refusal("{projectRoot}/Node_Modules/x"),
               Contains("\"packages/a/Node_Modules/x\"") && Contains("node_modules (\"Node_Modules\")"));
    CHECK_THAT(refusal("{projectRoot}/node_modules/.cache"), Contains("lies in node_modules"));
    // Only whole components count.
    CHECK(resolved(project_at("packages/a", "a"), {"{projectRoot}/.gitx", "{projectRoot}/my_node_modules"}) ==
          Strings{"packages/a/.gitx", "packages/a/my_node_modules"});
}

TEST_CASE("scratch: an entry with glob syntax is refused", "[run][scratch]")
{
    for (std::string entry : {"{projectRoot}/*.cache", "{projectRoot}/cache-?", "{projectRoot}/[ab]", "!x",
                              "{projectRoot}/@(x|y)", "a\\b", "{projectRoot}/**"})
        CHECK_THAT(refusal(entry), Contains("glob character"));
    CHECK_THAT(refusal("{projectRoot}/{a,b}"), Contains("braces are glob syntax"));
    CHECK_THAT(refusal("{projectRoot}/{options.dir}"), Contains("\"{options.dir}\""));
}

TEST_CASE("scratch: a directory holding a project or qk's state is refused", "[run][scratch]")
{
    TempWorkspace t;
    t.project("packages/a", "a");
    t.project("packages/a/e2e", "a-e2e");
    Workspace ws = t.load();

    CHECK_THAT(failure(check_scratch(ws, {"packages"})), Contains("\"packages\" holds the project a (packages/a)"));
    CHECK_THAT(failure(check_scratch(ws, {"packages/a"})), Contains("holds the project a (packages/a)"));
    CHECK_THAT(failure(check_scratch(ws, {"packages/a/.cache", "packages/a/e2e"})),
               Contains("\"packages/a/e2e\" holds the project a-e2e"));
    CHECK_THAT(failure(check_scratch(ws, {"packages/a/x/.Qk/y"})), Contains("qk's state"));
    // Beside projects, inside one, and not there yet: all fine.
    CHECK(check_scratch(ws, {"packages/a/.cache", "packages/b", "packages/a/e2e/.tmp", "tmp/x/y"}).ok());
}

TEST_CASE("scratch: a directory that is or lies under a symbolic link or a file is refused", "[run][scratch]")
{
    TempWorkspace t;
    t.project("packages/a", "a");
    Workspace ws = t.load();
    fs::create_directory_symlink(t.outside, t.root / "linked");
    fs::create_directory_symlink(t.outside, t.root / "packages/a/.cache");
    t.write("packages/a/file", "x");

    std::string under = failure(check_scratch(ws, {"linked/cache"}));
    CHECK_THAT(under, Contains("\"linked/cache\": linked is a symbolic link (to " + t.outside.string() + ")") &&
                          Contains("remove the link, or change the scratch entry"));
    CHECK_THAT(failure(check_scratch(ws, {"packages/a/.cache"})), Contains("packages/a/.cache is a symbolic link"));
    CHECK_THAT(failure(check_scratch(ws, {"packages/a/file/x"})), Contains("packages/a/file is a file"));
}

TEST_CASE("scratch: two tasks may not share or nest scratch directories", "[run][scratch]")
{
    std::string same = failure(check_scratch_overlaps({{"a:lint", {"x", "packages/a/.cache"}},
                                                       {"b:lint", {"packages/b/.cache"}},
                                                       {"a:test", {"packages/a/.cache"}}}));
    CHECK_THAT(same,
               Contains("a:lint and a:test share") && Contains("\"packages/a/.cache\" and \"packages/a/.cache\""));

    std::string nested = failure(check_scratch_overlaps({{"a:lint", {"tmp/a/b"}}, {"b:lint", {"tmp/a"}}}));
    CHECK_THAT(nested, Contains("a:lint and b:lint have nested") && Contains("\"tmp/a/b\" and \"tmp/a\""));
    CHECK_FALSE(check_scratch_overlaps({{"a:lint", {"tmp"}}, {"b:lint", {"tmp/a/b"}}}).ok());

    // Siblings, a shared prefix that is not a component, and one task repeating or nesting its own.
    CHECK(check_scratch_overlaps({{"a:lint", {"a/b", "a/b", "a/b/c"}}, {"b:lint", {"a/bc", "a/c"}}}).ok());
    CHECK(check_scratch_overlaps({{"a:lint", {"a/b"}}, {"a:lint", {"a/b"}}}).ok());
    CHECK(check_scratch_overlaps({}).ok());
}

TEST_CASE("scratch: emptying removes everything inside, follows no link and keeps the directory", "[run][scratch]")
{
    TempWorkspace t;
    fs::path dir = t.root / "packages/a/.cache";
    t.write("packages/a/.cache/top.txt", "1");
    t.write("packages/a/.cache/.hidden", "2");
    t.write("packages/a/.cache/.dir/deep/er/file", "3");
    t.write("packages/a/.cache/ro/file", "4");
    fs::create_directories(dir / "locked/inner");
    t.write("keep.txt", "outside", t.outside);
    t.write("dir/keep.txt", "outside", t.outside);
    fs::create_symlink(t.outside / "keep.txt", dir / "file-link");
    fs::create_directory_symlink(t.outside / "dir", dir / "dir-link");
    fs::create_directory_symlink(t.outside / "dir", dir / ".dir/deep/link");
    fs::create_symlink("nowhere", dir / "dangling");
    fs::permissions(dir / "ro", fs::perms(0555));
    fs::permissions(dir / "locked", fs::perms(0));
    t.write("packages/a/beside.txt", "kept");
    struct stat before {};
    REQUIRE(::lstat(dir.c_str(), &before) == 0);

    auto s = empty_scratch(t.root, "packages/a/.cache");
    INFO((s.ok() ? std::string() : s.error().message));
    REQUIRE(s.ok());
    struct stat after {};
    REQUIRE(::lstat(dir.c_str(), &after) == 0);
    CHECK(after.st_ino == before.st_ino);
    CHECK(fs::is_empty(dir));
    CHECK(fs::exists(t.root / "packages/a/beside.txt"));
    CHECK(fs::exists(t.outside / "keep.txt"));
    CHECK(fs::exists(t.outside / "dir/keep.txt"));

    // Emptying an empty directory, even one a tool made read-only, keeps it.
    fs::permissions(dir, fs::perms(0555));
    REQUIRE(empty_scratch(t.root, "packages/a/.cache").ok());
    CHECK(fs::is_directory(dir));
}

TEST_CASE("scratch: a missing directory is created step by step", "[run][scratch]")
{
    TempWorkspace t;
    REQUIRE(empty_scratch(t.root, "packages/a/.cache/deep").ok());
    CHECK(fs::is_directory(t.root / "packages/a/.cache/deep"));
    CHECK(fs::is_empty(t.root / "packages/a/.cache/deep"));

    t.write("tmp/file", "x");
    CHECK_THAT(failure(empty_scratch(t.root, "tmp/file/x")), Contains("tmp/file is a file"));
    CHECK_THAT(failure(empty_scratch(t.root, "tmp/../x")), Contains("not a normalised path"));
    CHECK_THAT(failure(empty_scratch(t.root, "/tmp/x")), Contains("not a normalised path"));
}

TEST_CASE("scratch: a link planted after the check is refused at emptying, touching nothing", "[run][scratch]")
{
    TempWorkspace t;
    t.project("packages/a", "a");
    Workspace ws = t.load();
    t.write("tmp/x/cache/old", "stale");
    t.write("packages/a/.cache/old", "stale");
    REQUIRE(check_scratch(ws, {"tmp/x/cache", "packages/a/.cache", "gen/x"}).ok());
    t.write("x/cache/keep.txt", "outside", t.outside);

    SECTION("on the way")
    {
        fs::remove_all(t.root / "tmp");
        fs::create_directory_symlink(t.outside, t.root / "tmp");
        CHECK_THAT(failure(empty_scratch(t.root, "tmp/x/cache")),
                   Contains("\"tmp/x/cache\": tmp is a symbolic link") && Contains("remove the link"));
    }
    SECTION("the directory itself")
    {
        fs::remove_all(t.root / "packages/a/.cache");
        fs::create_directory_symlink(t.outside / "x/cache", t.root / "packages/a/.cache");
        CHECK_THAT(failure(empty_scratch(t.root, "packages/a/.cache")),
                   Contains("packages/a/.cache is a symbolic link"));
    }
    SECTION("on the way to one not made yet: nothing is created through it")
    {
        fs::create_directory_symlink(t.outside, t.root / "gen");
        CHECK_THAT(failure(empty_scratch(t.root, "gen/x")), Contains("gen is a symbolic link"));
        CHECK_THAT(failure(empty_scratch(t.root, "gen/new/deeper")), Contains("gen is a symbolic link"));
        CHECK_FALSE(fs::exists(t.outside / "new"));
        fs::remove(t.root / "gen");
        fs::create_directory_symlink(t.outside / "fresh", t.root / "gen");  // dangling
        CHECK_THAT(failure(empty_scratch(t.root, "gen/x")), Contains("gen is a symbolic link"));
        CHECK_FALSE(fs::exists(t.outside / "fresh"));
    }
    CHECK(fs::exists(t.outside / "x/cache/keep.txt"));
    CHECK(std::distance(fs::directory_iterator(t.outside / "x/cache"), fs::directory_iterator()) == 1);
}
