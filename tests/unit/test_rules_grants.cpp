// The enforce walk (Rules::grants) and the audit agreeing with it: directories allowed whole when every
// tracked file in them is an input (untracked files in them readable too), not when they hold .git,
// .qk, node_modules or an undeclared configuration file; declared directory links; literal paths; links
// left out; outputs, warm paths, scratch and what is kept open read and write.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "qk/key/session.hpp"
#include "qk/rules/rules.hpp"
#include "qk/sandbox/task_rules.hpp"
#include "rules_grants_support.hpp"
#include "test_support.hpp"

using namespace qk;
using qk::test::find;
using qk::test::TempDir;
using rules::Grant;
using rules::PathClass;

namespace {

struct GrantWorkspace : qk::test::PlannedWorkspace {
    GrantWorkspace() : PlannedWorkspace("qk-grants")
    {
        dir.write(".gitignore", "dist\nuntracked.txt\nproject.local.json\n");
        dir.write(".git/HEAD", "ref: refs/heads/main\n");
        dir.write(".git/refs/heads/main", "0000000000000000000000000000000000000000\n");
        dir.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
        dir.write("packages/app/node_modules/.vite/deps/_metadata.json", "{}\n");
        dir.write("packages/app/package.json", R"({ "name": "app" })");
        dir.write("packages/app/project.json", R"({ "name": "app", "targets": {
  "build": { "command": "true", "inputs": ["{projectRoot}/src/**/*", "{projectRoot}/linked", "{projectRoot}/gen.ts"],
             "outputs": ["{projectRoot}/dist"], "qk:sandbox": { "scratch": ["{projectRoot}/.cache"] } },
  "all": { "command": "true", "inputs": ["default"] },
  "spec": { "command": "true", "inputs": ["{projectRoot}/src/**/*", "!{projectRoot}/src/**/*.spec.ts"] }
} })");
        dir.write("packages/app/src/index.ts", "export {}\n");
        dir.write("packages/app/src/util/u.ts", "export {}\n");
        dir.write("packages/app/src/util/u.spec.ts", "test\n");
        dir.write("packages/app/src/untracked.txt", "git-ignored\n");
        dir.write("packages/app/node_modules/x/index.js", "x\n");
        dir.write("packages/app/notes.txt", "n\n");
        dir.write("packages/cfg/package.json", R"({ "name": "cfg" })");
        dir.write("packages/cfg/project.json", R"({ "name": "cfg", "targets": { "build": { "command": "true" } } })");
        dir.write("packages/cfg/project.local.json", R"({ "targets": {} })");
        dir.write("packages/cfg/src/c.ts", "export {}\n");
        dir.write("shared/real/r.txt", "real\n");
        dir.write("shared/real/deep/d.txt", "deep\n");
        dir.write("elsewhere/secret.txt", "secret\n");
        std::filesystem::create_symlink("../../shared/real", dir.path / "packages/app/linked");
        std::filesystem::create_symlink("../../elsewhere", dir.path / "packages/app/src/escape");
        plan({"build", "all", "spec"});
    }
};

// The paths granted under `prefix` with `access`, as "path" or "path/" for a whole directory.
std::vector<std::string> listed(const std::vector<Grant>& grants, const std::string& prefix, Grant::Access access)
{
    std::vector<std::string> out;
    for (const Grant& g : grants)
        if (g.access == access && g.path.starts_with(prefix))
            out.push_back(g.path + (g.directory ? "/" : ""));
    return out;
}

}  // namespace

TEST_CASE("grants: a directory whose every tracked file is an input is allowed whole", "[rules][grants]")
{
    GrantWorkspace ws;
    auto r = ws.rules_of("app:build", {"packages/app/.cache"});
    auto grants = r.grants();
    // src holds only inputs (its untracked file aside): whole, and the untracked file may be read.
    const Grant* src = find(grants, "packages/app/src");
    REQUIRE(src);
    CHECK(src->directory);
    CHECK(src->access == Grant::Access::read);
    CHECK(r.read(ws.abs("packages/app/src/untracked.txt")).why == PathClass::input);
    CHECK(r.read(ws.abs("packages/app/src/untracked.txt")).finding == rules::Finding::none);
    // A link inside it leads out of what the key holds: Landlock checks where it lands, which is not
    // granted, and the audit judges the canonical path the same way.
    CHECK_FALSE(find(grants, "elsewhere/secret.txt"));
    CHECK(r.read(ws.abs("elsewhere/secret.txt")).finding == rules::Finding::read_outside_inputs);
    // Not its project's other files.
    CHECK_FALSE(find(grants, "packages/app"));
    CHECK_FALSE(find(grants, "packages/app/notes.txt"));
}

TEST_CASE("grants: a negated group is held file by file", "[rules][grants]")
{
    GrantWorkspace ws;
    auto r = ws.rules_of("app:spec");
    auto grants = r.grants();
    CHECK(listed(grants, "packages/app/src", Grant::Access::read) ==
          std::vector<std::string>{"packages/app/src/index.ts", "packages/app/src/util/u.ts"});
    CHECK(r.read(ws.abs("packages/app/src/untracked.txt")).finding == rules::Finding::read_outside_inputs);
    CHECK(r.read(ws.abs("packages/app/src/util/u.spec.ts")).finding == rules::Finding::read_outside_inputs);
}

TEST_CASE("grants: node_modules and undeclared configuration keep a directory from being whole",
          "[rules][grants]")
{
    GrantWorkspace ws;
    // app's default input selects every tracked file of it, but it holds node_modules: what lies beside
    // that is allowed, node_modules being open anyway.
    auto app = ws.rules_of("app:all");
    auto grants = app.grants();
    CHECK_FALSE(find(grants, "packages/app"));
    REQUIRE(find(grants, "packages/app/src"));
    CHECK(find(grants, "packages/app/src")->directory);
    CHECK(find(grants, "packages/app/notes.txt"));
    const Grant* nm = find(grants, "packages/app/node_modules");
    REQUIRE(nm);
    CHECK(nm->access == Grant::Access::read);  // what was installed is read-only (held_paths.hpp)
    CHECK(nm->why == PathClass::node_modules);

    // cfg holds a git-ignored project.local.json its inputs do not select: Landlock cannot allow the
    // directory less that file, so its inputs are allowed one by one.
    auto cfg = ws.rules_of("cfg:build");
    auto cg = cfg.grants();
    CHECK_FALSE(find(cg, "packages/cfg"));
    CHECK(find(cg, "packages/cfg/src"));
    CHECK(find(cg, "packages/cfg/package.json"));
    CHECK_FALSE(find(cg, "packages/cfg/project.local.json"));
    CHECK(cfg.read(ws.abs("packages/cfg/project.local.json")).finding == rules::Finding::read_outside_inputs);
}

TEST_CASE("grants: a declared directory link allows the tree it leads to, as the audit does", "[rules][grants]")
{
    GrantWorkspace ws;
    auto r = ws.rules_of("app:build");
    auto grants = r.grants();
    const Grant* real = find(grants, "shared/real");
    REQUIRE(real);
    CHECK(real->directory);
    CHECK(r.read(ws.abs("shared/real/r.txt")).why == PathClass::input);
    CHECK(r.read(ws.abs("shared/real/deep/d.txt")).why == PathClass::input);
    // The link itself is left out: allowing it would allow whatever it leads to.
    CHECK_FALSE(find(grants, "packages/app/linked"));
}

TEST_CASE("grants: a path an input names literally is allowed as the task starts", "[rules][grants]")
{
    GrantWorkspace ws;
    auto r = ws.rules_of("app:build");
    CHECK_FALSE(find(r.grants(), "packages/app/gen.ts"));  // not there yet
    ws.dir.write("packages/app/gen.ts", "export {}\n");   // a dependency generated it since the run started
    CHECK(find(r.grants(), "packages/app/gen.ts"));
    CHECK(r.read(ws.abs("packages/app/gen.ts")).why == PathClass::input);
}

TEST_CASE("grants: what the task may write, and what stays open", "[rules][grants]")
{
    GrantWorkspace ws;
    ws.dir.write("packages/app/dist/main.js", "built\n");
    ws.dir.write("packages/app/.cache/c", "c\n");
    ws.dir.write(".env", "A=1\n");
    auto r = ws.rules_of("app:build", {"packages/app/.cache"});
    auto grants = r.grants();
    auto rw = [&](const std::string& path, PathClass why) {
        INFO(path);
        const Grant* g = find(grants, path);
        REQUIRE(g);
        CHECK(g->access == Grant::Access::read_write);
        CHECK(g->why == why);
    };
    rw("packages/app/dist", PathClass::output);
    rw("packages/app/.cache", PathClass::scratch);
    rw(".git/refs", PathClass::git);
    REQUIRE(find(grants, ".git"));
    CHECK(find(grants, ".git")->access == Grant::Access::read);  // its configuration in it
    CHECK_FALSE(find(grants, ".git/hooks"));
    CHECK(find(grants, ".env"));
    CHECK(find(grants, "packages/app/package.json"));
    CHECK(find(grants, ".gitignore"));
    // Nothing inside a directory already granted: dist's file is held by dist.
    CHECK_FALSE(find(grants, "packages/app/dist/main.js"));
    // Sorted component-wise: a parent comes before its children and "a/b" before "a.b".
    auto component_key = [](std::string p) {
        std::replace(p.begin(), p.end(), '/', '\x01');
        return p;
    };
    CHECK(std::is_sorted(grants.begin(), grants.end(), [&](const Grant& a, const Grant& b) {
        return component_key(a.path) < component_key(b.path);
    }));
    auto through = r.pass_through();
    auto bound = [&](const std::string& p) { return std::find(through.begin(), through.end(), p) != through.end(); };
    // What a task may write in .git and node_modules, not the trees whole.
    CHECK(bound(".git/refs"));
    CHECK_FALSE(bound(".git"));
    CHECK_FALSE(bound(".git/hooks"));
    CHECK(bound("packages/app/node_modules/.vite"));
    CHECK_FALSE(bound("packages/app/node_modules"));
    CHECK_FALSE(bound("packages/app/node_modules/x"));
    CHECK(bound("packages/app/.cache"));
}

TEST_CASE("grants: no rule through a link placed where a granted directory was", "[rules][grants]")
{
    GrantWorkspace ws;
    auto r = ws.rules_of("app:build");
    // An earlier task replaces src by a link to somewhere else: the walk gets no rule through it.
    std::filesystem::rename(ws.dir.path / "packages/app/src", ws.dir.path / "packages/app/src-moved");
    std::filesystem::create_symlink("../../elsewhere", ws.dir.path / "packages/app/src");
    auto grants = r.grants();
    // The whole-directory grant still names the path; the enforcer opens it refusing links on the way
    // (as kind_without_links does here), so no rule attaches. The files it would list apart are gone.
    for (const Grant& g : grants)
        CHECK_FALSE(g.path.starts_with("elsewhere"));
}

TEST_CASE("grants: the whole directories are exactly the outermost holding only inputs, in random trees",
          "[rules][grants]")
{
    // Inputs are the .ts files; a directory is whole when every file beneath it is one. The trees mix
    // .ts and .md files at random depths, so runs of consecutive inputs in the index start and end at
    // every kind of boundary; the reference is the definition, checked on the file list itself.
    std::mt19937 random(28);  // NOLINT(cert-msc51-cpp): a fixed seed, so that a failing tree comes back
    for (int round = 0; round < 40; ++round) {
        TempDir dir{"qk-whole"};
        dir.write("nx.json", "{}");
        dir.write("package.json", R"({ "name": "root", "private": true })");
        dir.write("p/package.json", R"({ "name": "p" })");
        dir.write("p/project.json",
                  R"({ "name": "p", "targets": { "build": { "command": "true", "inputs": ["{projectRoot}/**/*.ts"] } } })");
        std::vector<std::string> made;
        const int n = 1 + static_cast<int>(random() % 40);
        for (int f = 0; f < n; ++f) {
            std::string path = "p";
            for (int depth = static_cast<int>(random() % 4); depth > 0; --depth)
                path += "/" + std::string(1, static_cast<char>('a' + random() % 3));
            path += "/f" + std::to_string(f) + (random() % 4 == 0 ? ".md" : ".ts");
            dir.write(path, "x\n");
            made.push_back(path.substr(2));
        }
        auto session = key::Session::open(dir.path);
        REQUIRE(session);
        workspace::TaskRequest request;
        request.targets = {"build"};
        REQUIRE((*session)->plan(request));
        REQUIRE((*session)->keys().key(0));
        auto rules = sandbox::task_rules(**session, 0, {});
        REQUIRE(rules);
        std::vector<std::string> whole;
        for (const Grant& g : rules->grants())
            if (g.directory && g.access == Grant::Access::read && g.path.starts_with("p/"))
                whole.push_back(g.path.substr(2));
        std::sort(whole.begin(), whole.end());
        // The definition: directories under p holding only .ts files, the outermost of them.
        auto only_inputs = [&](const std::string& d) {
            return std::all_of(made.begin(), made.end(), [&](const std::string& f) {
                return !f.starts_with(d + "/") || f.ends_with(".ts");
            });
        };
        std::set<std::string> dirs;
        for (const std::string& f : made)
            for (auto slash = f.find('/'); slash != std::string::npos; slash = f.find('/', slash + 1))
                dirs.insert(f.substr(0, slash));
        std::vector<std::string> expected;
        for (const std::string& d : dirs) {
            bool outermost = true;
            for (auto slash = d.find('/'); slash != std::string::npos; slash = d.find('/', slash + 1))
                outermost = outermost && !only_inputs(d.substr(0, slash));
            if (only_inputs(d) && outermost)
                expected.push_back(d);
        }
        INFO("round " << round << ": " << made.size() << " files");
        CHECK(whole == expected);
    }
}
