// The rule builder: every class of path a task may or may not touch, on a small workspace where app
// depends on lib, with outputs, warm paths, scratch, ignoreReads and a json input declared.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "qk/rules/rules.hpp"
#include "rules_workspace.hpp"

using namespace qk;
using qk::test::RulesWorkspace;
using rules::Finding;
using rules::PathClass;


TEST_CASE("rules: reads by class", "[rules]")
{
    RulesWorkspace ws;
    auto r = ws.rules_of("app:build", {"packages/app/.tool-cache"});
    REQUIRE(r);
    auto read = [&](const std::string& rel) { return r->read(ws.abs(rel)); };
    auto is = [&](const std::string& rel, PathClass why, Finding finding) {
        INFO(rel);
        rules::Verdict v = read(rel);
        CHECK(rules::class_name(v.why) == std::string(rules::class_name(why)));
        CHECK(static_cast<int>(v.finding) == static_cast<int>(finding));
        return v;
    };
    is("packages/app/src/index.ts", PathClass::input, Finding::none);
    // default's {projectRoot}/**/* selects the project's own project.json (spec).
    is("packages/app/project.json", PathClass::input, Finding::none);
    is("packages/app/src/index.spec.ts", PathClass::other, Finding::read_outside_inputs);
    is("packages/app/package.json", PathClass::input, Finding::none);
    is(".gitignore", PathClass::always, Finding::none);
    is("other/notes.txt", PathClass::other, Finding::read_outside_inputs);
    is(".env", PathClass::dotenv, Finding::unkeyed_read);
    is("packages/app/.env.local", PathClass::dotenv, Finding::unkeyed_read);
    is(".git/HEAD", PathClass::git, Finding::unkeyed_read);
    is(".nvmrc", PathClass::toolchain, Finding::toolchain_read);
    is("packages/other/package.json", PathClass::manifest, Finding::manifest_read);
    is("packages/lib/package.json", PathClass::manifest, Finding::manifest_read);
    auto dep = is("packages/lib/src/lib.ts", PathClass::dependency_project, Finding::dependency_read);
    CHECK(ws.session->workspace().projects()[dep.project].name == "lib");
    is("packages/lib/README.md", PathClass::ignored_read, Finding::none);
    is("docs/x.md", PathClass::ignored_read, Finding::none);
    is("tsconfig.base.json", PathClass::tsconfig, Finding::tsconfig_read);
    is("nx.json", PathClass::effect_file, Finding::read_outside_inputs);
    is("pnpm-workspace.yaml", PathClass::effect_file, Finding::read_outside_inputs);
    is("package.json", PathClass::effect_file, Finding::read_outside_inputs);
    is("node_modules/x/index.js", PathClass::node_modules, Finding::none);
    is("packages/app/node_modules/.cache/y", PathClass::node_modules, Finding::none);
    is(".qk/cache/file-hashes", PathClass::qk_state, Finding::none);
    is("packages/lib/out/a.js", PathClass::dependency_output, Finding::none);
    is("packages/lib/out/a.txt", PathClass::dependency_project, Finding::dependency_read);
    is("packages/app/dist/main.js", PathClass::output, Finding::none);
    is("packages/app/.warm/state", PathClass::warm, Finding::none);
    is("packages/app/.tool-cache/x", PathClass::scratch, Finding::none);
    CHECK(r->read("/usr/lib/libc.so.6").why == PathClass::outside);
    // A sibling directory whose name starts with the root's is outside, not inside.
    CHECK(r->read(ws.dir.path.string() + "-other/x").why == PathClass::outside);
}

TEST_CASE("rules: writes by class", "[rules]")
{
    RulesWorkspace ws;
    auto r = ws.rules_of("app:build", {"packages/app/.tool-cache"});
    REQUIRE(r);
    auto write = [&](const std::string& rel, bool create_or_remove = false) { return r->write(ws.abs(rel), create_or_remove); };
    CHECK(write("packages/app/dist/main.js").why == PathClass::output);
    CHECK(write("packages/app/dist/sub/x.js").finding == Finding::none);
    CHECK(write("packages/app/.warm/state").why == PathClass::warm);
    CHECK(write("packages/app/.tool-cache/x").why == PathClass::scratch);
    CHECK(write("node_modules/.cache/x").why == PathClass::node_modules);
    CHECK(write(".qk/anything").why == PathClass::qk_state);
    // Creating the directory an output lies in is not a stray write; writing a file by that name is.
    CHECK(write("packages/app", true).why == PathClass::output_directory);
    CHECK(write("packages", true).why == PathClass::output_directory);
    CHECK(write("packages/app", false).finding == Finding::stray_write);
    rules::Verdict stray = write("stray.txt");
    CHECK(stray.finding == Finding::stray_write);
    CHECK_FALSE(stray.allowed());
    rules::Verdict git = write(".git/index");
    CHECK(git.why == PathClass::git);
    CHECK(git.finding == Finding::stray_write);
    CHECK(git.allowed());
    // What git runs and what was installed: refused, and a finding the audit counts.
    for (const char* held : {".git/config", ".git/config.lock", ".git/hooks/pre-commit", ".git/commondir",
                             ".git/modules/sub/config", ".git"}) {
        INFO(held);
        CHECK(write(held).why == PathClass::git_machinery);
        CHECK_FALSE(write(held).allowed());
    }
    CHECK(write(".git/refs/heads/config").allowed());  // a branch named config
    for (const char* held : {"node_modules/x/index.js", "node_modules/.pnpm/x@1/node_modules/x/a.js",
                             "node_modules/.bin/tsc", "node_modules/.modules.yaml", "node_modules",
                             "packages/app/node_modules/@scope/y/package.json"}) {
        INFO(held);
        CHECK(write(held).why == PathClass::installed_files);
        CHECK_FALSE(write(held).allowed());
    }
    CHECK(write("packages/app/node_modules/.vite/deps/x.js").allowed());
    // Inputs are read, not written; a dependency's outputs are its own.
    CHECK(write("packages/app/src/index.ts").finding == Finding::stray_write);
    CHECK(write("packages/lib/out/a.js").finding == Finding::stray_write);
    CHECK(r->write("/tmp/x", false).why == PathClass::outside);
    CHECK(r->output_directories() == std::vector<std::string>{"packages", "packages/app"});
}

TEST_CASE("rules: a json input lets its file be read, only for the task declaring it", "[rules]")
{
    RulesWorkspace ws;
    auto lint = ws.rules_of("app:lint");
    REQUIRE(lint);
    CHECK(lint->read(ws.abs("tsconfig.base.json")).why == PathClass::json_input);
    // lint declares no file inputs: its own sources are outside them, and it has no outputs.
    CHECK(lint->read(ws.abs("packages/app/src/index.ts")).finding == Finding::read_outside_inputs);
    CHECK(lint->write(ws.abs("packages/app/dist/x"), false).finding == Finding::stray_write);
    // lint does not depend on lib's build: its outputs are lib's files to it.
    CHECK(lint->read(ws.abs("packages/lib/out/a.js")).finding == Finding::dependency_read);
}

TEST_CASE("rules: a lib task's dependency reads and the ^ ignoreReads of another task do not leak", "[rules]")
{
    RulesWorkspace ws;
    auto lib = ws.rules_of("lib:build");
    REQUIRE(lib);
    // lib depends on nothing: app's files are simply outside its inputs.
    CHECK(lib->read(ws.abs("packages/app/src/index.ts")).finding == Finding::read_outside_inputs);
    CHECK(lib->read(ws.abs("packages/lib/README.md")).why == PathClass::input);
    CHECK(lib->read(ws.abs("docs/x.md")).finding == Finding::read_outside_inputs);
    CHECK(lib->write(ws.abs("packages/lib/out/a.js"), false).why == PathClass::output);
    CHECK(lib->write(ws.abs("packages/lib/out/a.txt"), false).finding == Finding::stray_write);
    // The literal directory of a glob output is where its outputs lie.
    CHECK(lib->write(ws.abs("packages/lib/out"), true).why == PathClass::output_directory);
}

TEST_CASE("rules: describe names every declared class", "[rules]")
{
    RulesWorkspace ws;
    auto r = ws.rules_of("app:build", {"packages/app/.tool-cache"});
    REQUIRE(r);
    std::string all;
    for (const auto& line : r->describe())
        all += line.access + " | " + line.path + " | " + line.why + "\n";
    CHECK_THAT(all, Catch::Contains("read, write | packages/app/dist | its outputs"));
    CHECK_THAT(all, Catch::Contains("read, write | packages/app/.warm | its warm paths"));
    CHECK_THAT(all, Catch::Contains("read, write | packages/app/.tool-cache | its scratch directories"));
    CHECK_THAT(all, Catch::Contains("read | docs/** | qk:ultracache.ignoreReads"));
    CHECK_THAT(all, Catch::Contains("read | ^README.md |"));
    CHECK_THAT(all, Catch::Contains("read | packages/lib/out/**/*.js | outputs of lib:build"));
    CHECK_THAT(all, Catch::Contains("input production"));
    CHECK_THAT(all, Catch::Contains("the files of lib | projects it depends on"));
    CHECK_THAT(all, Catch::Contains("nx.json"));
}

TEST_CASE("rules: a warm path or ignoreReads glob leaving the workspace is refused, naming the task", "[rules]")
{
    RulesWorkspace warm(R"("../elsewhere")");
    auto r = warm.rules_of("app:build");
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("app:build: qk:warm"));
    CHECK_THAT(r.error().message, Catch::Contains("inside the workspace"));
}

TEST_CASE("Rules::relative: the root is \"\", a path beneath it loses the root, any other has none", "[rules]")
{
    qk::test::RulesWorkspace ws;
    auto rules = ws.rules_of("app:build");
    REQUIRE(rules);
    const std::string root = ws.dir.path.string();
    CHECK(rules->relative(root) == std::optional<std::string_view>(""));
    CHECK(rules->relative(root + "/packages/app/x.ts") == std::optional<std::string_view>("packages/app/x.ts"));
    CHECK_FALSE(rules->relative(root + "-sibling/x.ts"));  // a name that continues the root's is no component
    CHECK_FALSE(rules->relative("/elsewhere/x.ts"));
    CHECK_FALSE(rules->relative(""));
}
