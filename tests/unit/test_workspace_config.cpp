// Loading workspaces: the root, project discovery, package.json scripts and "nx", project.json over
// package.json, project.local.json and nx.local.json on top, run specs and qk's own target keys.
#include <catch2/catch.hpp>

#include "qk/workspace/workspace.hpp"

using namespace qk::workspace;

namespace {

std::filesystem::path fixture(const std::string& name)
{
    return std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces" / name;
}

Workspace load(const std::string& name)
{
    auto ws = Workspace::load(fixture(name));
    INFO((ws.ok() ? std::string() : ws.error().message));
    REQUIRE(ws.ok());
    return std::move(*ws);
}

std::vector<std::string> names_of(const Workspace& ws)
{
    std::vector<std::string> out;
    for (const auto& p : ws.projects())
        out.push_back(p.name);
    return out;
}

std::vector<std::string> target_names(const Project& p)
{
    std::vector<std::string> out;
    for (const auto& t : p.targets)
        out.push_back(t.name);
    return out;
}

const Target& target(const Workspace& ws, const std::string& project, const std::string& name)
{
    auto t = ws.target(project, name);
    INFO((t.ok() ? std::string() : t.error().message));
    REQUIRE(t.ok());
    return **t;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("find_root walks up to the directory holding nx.json or pnpm-workspace.yaml", "[workspace]")
{
    auto root = Workspace::find_root(fixture("pnpm-chain/packages/a/src"));
    REQUIRE(root.ok());
    CHECK(*root == fixture("pnpm-chain").lexically_normal());

    auto none = Workspace::find_root("/proc/self");
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message.rfind("no workspace found: neither nx.json nor pnpm-workspace.yaml is in /proc/self", 0) == 0);

    auto ws = Workspace::discover(fixture("pnpm-chain/packages/b"));
    REQUIRE(ws.ok());
    CHECK(ws->root() == fixture("pnpm-chain").lexically_normal());
}

TEST_CASE("a pnpm workspace: projects from pnpm-workspace.yaml globs, scripts as targets", "[workspace]")
{
    Workspace ws = load("pnpm-chain");
    // packages/excluded is negated, docs/ is not in the globs, node_modules is never entered, and the
    // root package.json has no "nx" field.
    CHECK(names_of(ws) == Strings{"a", "b", "c"});
    CHECK(ws.package_globs() == Strings{"packages/*", "!packages/excluded"});
    CHECK(ws.files().nx_json == "nx.json");
    CHECK(ws.files().pnpm_workspace_yaml == "pnpm-workspace.yaml");
    CHECK(ws.files().root_package_json == "package.json");
    CHECK(ws.files().nx_local_json.empty());

    const Project& a = *ws.find_project("a");
    CHECK(a.root == "packages/a");
    CHECK(a.package_name == "a");
    CHECK(a.package_version == "1.0.0");
    CHECK(a.package_json == "packages/a/package.json");
    CHECK(a.project_json.empty());
    CHECK(a.tags == Strings{"npm:public"});
    CHECK(target_names(a) == Strings{"build", "prebuild", "test"});

    const Target& build = target(ws, "a", "build");
    CHECK(build.executor == "nx:run-script");
    CHECK(build.target_default_key == "build");
    CHECK(build.cache);
    REQUIRE(build.inputs);
    CHECK(build.inputs->dump() == R"(["production","^production"])");
    REQUIRE(build.outputs);
    CHECK(build.outputs->dump() == R"(["{projectRoot}/dist"])");
    REQUIRE(build.depends_on.size() == 1);
    CHECK(build.depends_on[0].scope == DependsOn::Scope::dependencies);
    CHECK(build.depends_on[0].target == "build");
    CHECK(build.raw.dump() == R"({"executor":"nx:run-script","options":{"script":"build"},"dependsOn":["^build"],)"
                              R"("inputs":["production","^production"],"outputs":["{projectRoot}/dist"],"cache":true})");
    CHECK(build.defined_in == Strings{"packages/a/package.json"});

    // Run like `pnpm run build`: pre-script first, in the project, the project's then the root's .bin on PATH.
    CHECK(build.run.kind == RunSpec::Kind::script);
    CHECK(build.run.script == "build");
    CHECK(build.run.commands == Strings{"echo before", "tsc -p tsconfig.json"});
    CHECK(build.run.lifecycle_events == Strings{"prebuild", "build"});
    CHECK(build.run.cwd == "packages/a");
    CHECK(build.run.path_prepend == Strings{"packages/a/node_modules/.bin", "node_modules/.bin"});
    CHECK_FALSE(build.run.parallel);
    CHECK(build.run.problem.empty());

    const Target& test = target(ws, "a", "test");
    CHECK_FALSE(test.cache);
    CHECK_FALSE(test.inputs.has_value());
    CHECK_FALSE(test.outputs.has_value());
    CHECK(test.depends_on.empty());
    CHECK(test.target_default_key.empty());

    CHECK(target(ws, "b", "build").run.commands == Strings{"tsc", "echo after"});
    CHECK(target(ws, "b", "build").run.lifecycle_events == Strings{"build", "postbuild"});

    CHECK(ws.named_inputs_for(a).dump() ==
          R"({"default":["{projectRoot}/**/*","sharedGlobals"],"production":["default","!{projectRoot}/**/*.spec.ts"],)"
          R"("sharedGlobals":[]})");
    CHECK(ws.project_owning("packages/a/src/index.ts") == &a);
    CHECK(ws.project_owning("packages/ab/x") == nullptr);
    CHECK(ws.project_owning("docs/package.json") == nullptr);
}

TEST_CASE("package.json workspaces (the {packages} form, \"./\" and a trailing \"/\") select projects", "[workspace]")
{
    Workspace ws = load("package-workspaces");
    CHECK(names_of(ws) == Strings{"@pw/one", "@pw/two", "gen"});
    CHECK(ws.package_globs() == Strings{"libs/*", "./tools/*/"});
    CHECK(ws.files().pnpm_workspace_yaml.empty());
    CHECK(ws.find_project("gen")->root == "tools/gen");
}

TEST_CASE("project.json-only projects: names, nx:run-commands, the command shorthand, tokens", "[workspace]")
{
    Workspace ws = load("project-json-only");
    // The root package.json has no "nx" field and there is no root project.json: no root project.
    CHECK(names_of(ws) == Strings{"shared-util", "ui", "web"});
    const Project& ui = *ws.find_project("ui");  // no name: the directory's
    CHECK(ui.root == "libs/ui");
    CHECK(ui.project_json == "libs/ui/project.json");
    CHECK(ui.package_json.empty());
    CHECK(ui.tags == Strings{"type:lib", "scope:shared"});

    const Target& build = target(ws, "web", "build");
    CHECK(build.executor == "nx:run-commands");
    CHECK(build.options.dump() == R"({"cwd":"apps/web","command":"vite build --outDir dist/apps/web"})");
    CHECK(build.outputs->dump() == R"(["{workspaceRoot}/dist/{projectRoot}"])");
    CHECK(build.run.kind == RunSpec::Kind::commands);
    CHECK(build.run.commands == Strings{"vite build --outDir dist/apps/web"});
    CHECK(build.run.cwd == "apps/web");
    CHECK(build.run.path_prepend == Strings{"apps/web/node_modules/.bin", "apps/node_modules/.bin", "node_modules/.bin"});
    CHECK_FALSE(build.run.parallel);

    // Options run-commands does not know are passed on as --key=value.
    const Target& serve = target(ws, "web", "serve");
    CHECK(serve.continuous);
    CHECK(serve.run.commands == Strings{"vite --port=4200 --open=true"});
    CHECK(serve.run.env == std::vector<std::pair<std::string, std::string>>{{"NODE_ENV", "development"}});
    CHECK(serve.run.cwd == ".");
    CHECK(serve.run.path_prepend == Strings{"node_modules/.bin"});

    const Target& check = target(ws, "web", "check");
    CHECK(check.run.commands == Strings{"tsc --noEmit --dir=src --quiet", "eslint src"});
    CHECK_FALSE(check.run.parallel);

    const Target& lint = target(ws, "web", "lint");
    CHECK(lint.run.commands == Strings{"eslint .", "stylelint ."});
    CHECK(lint.run.parallel);  // `commands` run side by side unless parallel is false
    CHECK(lint.cache);         // nx.json tasksRunnerOptions cacheableOperations (legacy)
    CHECK_FALSE(build.cache);

    const Target& e2e = target(ws, "web", "e2e");
    CHECK(e2e.run.kind == RunSpec::Kind::unsupported);
    CHECK(e2e.options.dump() == R"({"cypressConfig":"apps/web/cypress.config.ts"})");
    CHECK(e2e.run.problem == "qk cannot run the executor \"@nx/cypress:cypress\"; give the target a \"command\" "
                             "(nx:run-commands) or make it a package.json script");

    CHECK(target(ws, "ui", "build").run.commands == Strings{"tsc -p libs/ui/tsconfig.lib.json"});
    CHECK(target(ws, "ui", "build").run.cwd == "libs/ui");
    // A target with neither executor nor command nor dependsOn is dropped, as Nx drops it.
    CHECK(target_names(*ws.find_project("shared-util")) == Strings{"build"});
}

TEST_CASE("package.json \"nx\" field, project.json over it, project.local.json over both", "[workspace]")
{
    Workspace ws = load("precedence");
    CHECK(names_of(ws) == Strings{"lib", "precedence-root", "solo"});
    const Project& lib = *ws.find_project("lib");  // project.json's name over nx.name over package.json name
    CHECK(lib.package_name == "@acme/lib");
    CHECK(lib.package_version == "2.1.0");
    CHECK(lib.tags == Strings{"npm:public", "npm:ui", "from-package-json", "from-project-json"});
    CHECK(lib.named_inputs.dump() ==
          R"({"production":["{projectRoot}/src/**/*.ts"],"pkgOnly":["{projectRoot}/a"]})");
    CHECK(lib.project_local_json == "packages/lib/project.local.json");
    CHECK(target_names(lib) == Strings{"build", "docs", "lint", "local-only", "test"});

    // Compatible layers merge: the script stays, project.json's outputs win, its "..." takes the inputs
    // below, options merge key by key, project.local.json's cache wins.
    const Target& build = target(ws, "lib", "build");
    CHECK(build.raw.dump() == R"({"executor":"nx:run-script","outputs":["{projectRoot}/dist"],"cache":true,)"
                              R"("inputs":["{projectRoot}/pkg-input","{projectRoot}/pj-input"],)"
                              R"("options":{"script":"build","a":1,"b":2,"c":3}})");
    CHECK(build.defined_in ==
          Strings{"packages/lib/package.json", "packages/lib/project.json", "packages/lib/project.local.json"});
    CHECK(build.run.commands == Strings{"tsc -b"});

    // A target that says how to run differently replaces the lower layer's.
    const Target& test = target(ws, "lib", "test");
    CHECK(test.raw.dump() == R"({"executor":"nx:run-commands","options":{"command":"vitest run"}})");
    CHECK(test.defined_in == Strings{"packages/lib/project.json"});
    CHECK(target(ws, "lib", "docs").run.commands == Strings{"typedoc --json"});
    const Target& lint = target(ws, "lib", "lint");
    CHECK(lint.run.commands == Strings{"eslint . --fix"});
    CHECK(lint.defined_in == Strings{"packages/lib/project.local.json"});
    CHECK(target(ws, "lib", "local-only").run.commands == Strings{"echo local"});

    // The root package.json's "nx" field makes the root a project.
    const Project& root = *ws.find_project("precedence-root");
    CHECK(root.root == ".");
    CHECK(root.tags == Strings{"npm:private"});
    CHECK(target_names(root) == Strings{"fmt"});
    CHECK(target(ws, "solo", "build").run.path_prepend == Strings{"packages/solo/node_modules/.bin", "node_modules/.bin"});
    CHECK(ws.project_owning("packages/lib/src/x.ts") == &lib);
    CHECK(ws.project_owning("README.md") == &root);
}

TEST_CASE("nx.local.json merges into nx.json; qk's target keys are kept", "[workspace]")
{
    Workspace ws = load("local-overrides");
    CHECK(ws.files().nx_local_json == "nx.local.json");
    CHECK(ws.nx().named_inputs.dump() ==
          R"({"production":["default","!{projectRoot}/**/*.test.ts"],"local":["{projectRoot}/local.txt"]})");
    CHECK(ws.nx().target_defaults.find("build")->dump() ==
          R"({"cache":false,"outputs":["{projectRoot}/dist"],"inputs":["production"]})");

    const Target& build = target(ws, "core", "build");
    CHECK_FALSE(build.cache);
    CHECK(build.sandbox.enabled);
    CHECK(build.sandbox.scratch == Strings{"{projectRoot}/.tool-cache"});
    CHECK(build.has_ultracache);
    CHECK(build.ultracache_ignore_reads == Strings{"^**", "{projectRoot}/tsconfig.json"});
    CHECK(build.warm == Strings{"{projectRoot}/.warm"});

    const Target& lint = target(ws, "core", "lint");  // from targetDefaults
    CHECK(lint.cache);
    CHECK(lint.warm == Strings{"{projectRoot}/.eslintcache"});
    CHECK_FALSE(lint.has_ultracache);
    CHECK(lint.sandbox.enabled);
    CHECK(lint.sandbox.scratch.empty());

    const Target& test = target(ws, "core", "test");  // project.local.json turns the sandbox off
    CHECK_FALSE(test.sandbox.enabled);
    CHECK(test.sandbox.scratch.empty());
    CHECK(test.defined_in == Strings{"libs/core/project.json", "libs/core/project.local.json"});
}
