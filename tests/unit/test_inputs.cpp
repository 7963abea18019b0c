// Expanding inputs (named inputs, ^ dependency inputs, tokens, object forms) and resolving outputs, on
// the fixture workspace tests/fixtures/workspaces/keys (a -> b -> c).
#include <catch2/catch.hpp>

#include "qk/key/inputs.hpp"
#include "qk/key/outputs.hpp"

using namespace qk::key;
using namespace qk::workspace;

namespace {

using Strings = std::vector<std::string>;

// The groups as "project|origin|patterns" lines, for exact comparison.
Strings describe(const Workspace& ws, const InputPlan& plan)
{
    Strings out;
    for (const auto& group : plan.filesets) {
        const FilesetGroup& g = *group;
        std::string line = (g.project ? ws.projects()[*g.project].name : std::string("<workspace>")) + "|" + g.origin + "|";
        for (std::size_t i = 0; i < g.patterns.size(); ++i)
            line += (i ? " " : "") + g.patterns[i];
        out.push_back(line);
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("inputs: targetDefaults' production and ^production, with a project's own namedInputs", "[key][inputs]")
{
    // Fixture::load moves a Workspace into the struct; the graph must point at the moved one.
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/keys");
    REQUIRE(ws.ok());
    auto graph = ProjectGraph::build(*ws);
    REQUIRE(graph.ok());
    auto t = ws->target("a", "build");
    REQUIRE(t.ok());
    auto plan = plan_inputs(*graph, *ws->project_index("a"), **t);
    INFO((plan.ok() ? std::string() : plan.error().message));
    REQUIRE(plan.ok());
    // a overrides production (no spec exclusion, e2e excluded); b and c use nx.json's; ^ is transitive.
    CHECK(describe(*ws, *plan) ==
          Strings{
              "<workspace>|production, ^production (b), ^production (c)|babel.config.json",
              "a|production|!packages/a/e2e/** packages/a/**/*",
              "b|^production (b)|!packages/b/**/?(*.)+(spec|test).[jt]s?(x) !packages/b/jest.config.ts packages/b/**/*",
              "c|^production (c)|!packages/c/**/?(*.)+(spec|test).[jt]s?(x) !packages/c/jest.config.ts packages/c/**/*",
          });
    CHECK(plan->env == Strings{"QK_TEST_SHARED"});
    CHECK_FALSE(plan->external_dependencies.has_value());
    CHECK(plan->dependency_inputs == Strings{"production"});
    // Unexpanded, as the key plans it: the dependencies' part is named, folded by digest, not listed.
    auto own = plan_inputs(*graph, *ws->project_index("a"), **t, nullptr, qk::key::Expansion::own);
    REQUIRE(own.ok());
    CHECK(describe(*ws, *own) == Strings{"<workspace>|production|babel.config.json",
                                         "a|production|!packages/a/e2e/** packages/a/**/*"});
    CHECK(own->dependency_inputs == Strings{"production"});
    CHECK(own->env == Strings{"QK_TEST_SHARED"});
    // The negations hold within their group: b's spec file is out, its source in.
    for (const auto& g : plan->filesets)
        if (g->project == ws->project_index("b")) {
            CHECK(g->globs.matches("packages/b/src/index.ts"));
            CHECK_FALSE(g->globs.matches("packages/b/src/index.test.ts"));
            CHECK_FALSE(g->globs.matches("packages/b/jest.config.ts"));
        }
}

TEST_CASE("inputs: no inputs declared means default and ^default", "[key][inputs]")
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/keys");
    REQUIRE(ws.ok());
    auto graph = ProjectGraph::build(*ws);
    REQUIRE(graph.ok());
    auto t = ws->target("b", "build");  // b's build comes from its package.json script + targetDefaults
    REQUIRE(t.ok());
    Target plain = **t;
    plain.inputs.reset();
    auto plan = plan_inputs(*graph, *ws->project_index("b"), plain);
    REQUIRE(plan.ok());
    CHECK(describe(*ws, *plan) == Strings{
                                      "<workspace>|default, ^default (c)|babel.config.json",
                                      "b|default|packages/b/**/*",
                                      "c|^default (c)|packages/c/**/*",
                                  });
}

TEST_CASE("inputs: object forms: externalDependencies, runtime, json, {input, projects}, ^fileset, dependentTasksOutputFiles",
          "[key][inputs]")
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/keys");
    REQUIRE(ws.ok());
    auto graph = ProjectGraph::build(*ws);
    REQUIRE(graph.ok());
    std::size_t a = *ws->project_index("a");
    auto plan_of = [&](const std::string& target) {
        auto t = ws->target("a", target);
        REQUIRE(t.ok());
        auto plan = plan_inputs(*graph, a, **t);
        INFO((plan.ok() ? std::string() : plan.error().message));
        REQUIRE(plan.ok());
        return std::move(*plan);
    };

    InputPlan lint = plan_of("lint");
    REQUIRE(lint.external_dependencies.has_value());
    CHECK(*lint.external_dependencies == Strings{"eslint"});
    CHECK(lint.runtime == Strings{"echo lint-runtime"});
    CHECK(describe(*ws, lint) == Strings{"<workspace>|default|babel.config.json", "<workspace>|inputs|tools/**/*.js",
                                         "a|default|packages/a/**/*"});
    CHECK(lint.dependency_inputs.empty());

    InputPlan tsconfig = plan_of("tsconfig");
    REQUIRE(tsconfig.json.size() == 1);
    CHECK(tsconfig.json[0].pattern == "tsconfig.base.json");
    CHECK(tsconfig.json[0].fields == Strings{"compilerOptions"});
    CHECK(tsconfig.json[0].exclude_fields == Strings{"compilerOptions.paths"});
    CHECK(tsconfig.filesets.empty());

    InputPlan docs = plan_of("docs");
    CHECK(describe(*ws, docs) == Strings{"a|docs|packages/a/README.md", "b|^docs (b)|packages/b/README.md",
                                         "c|^docs (c)|packages/c/README.md", "c|docs of c|packages/c/README.md"});

    InputPlan typecheck = plan_of("typecheck");
    CHECK(describe(*ws, typecheck) == Strings{"b|^{projectRoot}/src/**/*.ts (b)|packages/b/src/**/*.ts",
                                              "c|^{projectRoot}/src/**/*.ts (c)|packages/c/src/**/*.ts"});
    REQUIRE(typecheck.dependent_outputs.size() == 1);
    CHECK(typecheck.dependent_outputs[0].glob == "**/*.d.ts");
    CHECK(typecheck.dependent_outputs[0].transitive);
}

TEST_CASE("inputs: errors name the task and the input", "[key][inputs]")
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/keys");
    REQUIRE(ws.ok());
    auto graph = ProjectGraph::build(*ws);
    REQUIRE(graph.ok());
    std::size_t a = *ws->project_index("a");
    Target t = **ws->target("a", "test");
    auto with_inputs = [&](const std::string& json) {
        auto parsed = parse_json(json, "test");
        REQUIRE(parsed.ok());
        t.inputs = *parsed;
        auto plan = plan_inputs(*graph, a, t);
        REQUIRE_FALSE(plan.ok());
        return plan.error().message;
    };
    CHECK(with_inputs(R"(["prod"])") ==
          "task a:test: input \"prod\" is not defined (named inputs of a: default, production, sharedGlobals, docs)");
    CHECK(with_inputs(R"(["^prod"])") ==
          "task a:test: input \"prod\" is not defined for project b (named inputs: default, production, sharedGlobals, docs)");
    CHECK(with_inputs(R"(["src/**/*.ts"])") ==
          "task a:test: input \"src/**/*.ts\" is a file pattern without a token: start it with {projectRoot}/ or {workspaceRoot}/");
    CHECK(with_inputs(R"(["{projectRoot}/../x"])") ==
          "task a:test: input \"{projectRoot}/../x\" steps up with \"..\"; write it without, as "
          "\"{workspaceRoot}/packages/x\"");
    CHECK(with_inputs(R"(["{projectRoot}/../../../etc/passwd"])") ==
          "task a:test: input \"{projectRoot}/../../../etc/passwd\" resolves to \"packages/a/../../../etc/passwd\", "
          "which leads outside the workspace; name a path inside it");
    CHECK(with_inputs(R"(["{projectRoot}/{workspaceRoot}/x"])") ==
          "task a:test: input \"{projectRoot}/{workspaceRoot}/x\": {workspaceRoot} may only start a path");
    CHECK(with_inputs(R"([{"what": 1}])") ==
          "task a:test: input {\"what\":1} is of no known form: expected fileset, input, runtime, env, "
          "externalDependencies, dependentTasksOutputFiles or json");
    CHECK(with_inputs(R"([{"input": "docs", "projects": "nothing-*"}])").find("matches no project") != std::string::npos);
    CHECK(with_inputs(R"([42])") == "task a:test: an input must be a string or an object, found a number");
}

TEST_CASE("inputs: namedInputs definitions cannot hold ^ or dependencies, nor include themselves", "[key][inputs]")
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/keys");
    REQUIRE(ws.ok());
    auto graph = ProjectGraph::build(*ws);
    REQUIRE(graph.ok());
    std::size_t a = *ws->project_index("a");
    Project& pa = const_cast<Project&>(ws->projects()[a]);  // test-only: edit a's own namedInputs
    Target t = **ws->target("a", "test");
    t.inputs = *parse_json(R"(["mine"])", "t");
    auto check = [&](const std::string& defs, const std::string& expected) {
        pa.named_inputs = *parse_json(defs, "defs");
        auto plan = plan_inputs(*graph, a, t);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().message == expected);
    };
    check(R"({"mine": ["^production"]})",
          "task a:test: named input \"mine\" of project a: namedInputs definitions cannot start with ^ (\"^production\"); "
          "put dependency inputs in the target's inputs");
    check(R"({"mine": [{"input": "production", "dependencies": true}]})",
          "task a:test: named input \"mine\": {\"input\":\"production\",\"dependencies\":true} cannot name `projects` or "
          "`dependencies` inside a namedInputs definition");
    check(R"({"mine": ["other"], "other": ["mine"]})",
          "task a:test: named input \"mine\" of a includes itself (through mine -> other)");
}

TEST_CASE("outputs: tokens, options, dropped unresolved ones, defaults and errors", "[key][outputs]")
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/keys");
    REQUIRE(ws.ok());
    const Project& a = **ws->project("a");
    const Project& b = **ws->project("b");
    auto out = resolve_outputs(a, **ws->target("a", "build"));
    REQUIRE(out.ok());
    CHECK(out->paths == Strings{"packages/a/dist", "dist/a", "dist/custom-a"});
    CHECK(out->dropped.empty());
    // b has no outputPath option: {options.outputPath} is dropped, as Nx drops it.
    auto outb = resolve_outputs(b, **ws->target("b", "build"));
    REQUIRE(outb.ok());
    CHECK(outb->paths == Strings{"packages/b/dist", "dist/b"});
    CHECK(outb->dropped == Strings{"{options.outputPath}"});

    Target t = **ws->target("a", "test");
    t.outputs.reset();
    t.name = "build";
    t.options = Json::object();
    auto defaults = resolve_outputs(a, t);
    REQUIRE(defaults.ok());
    CHECK(defaults->defaulted);
    CHECK(defaults->paths == Strings{"dist/packages/a", "packages/a/dist", "packages/a/build", "packages/a/public"});
    t.name = "test";
    CHECK(resolve_outputs(a, t)->paths.empty());

    t.outputs = *parse_json(R"(["!{projectRoot}/dist/cache", "{projectRoot}/dist/**/*.{js,map}"])", "o");
    CHECK(resolve_outputs(a, t)->paths == Strings{"!packages/a/dist/cache", "packages/a/dist/**/*.{js,map}"});
    // What a restore would clear is never outside the workspace, its root, .git or .qk; each error says
    // where the output is configured and what to write instead.
    t.defined_in = {"packages/a/project.json"};
    const std::string where = " (its outputs in packages/a/project.json, or nx.json's targetDefaults \"test\")";
    auto bad = [&](const char* outputs) {
        t.outputs = *parse_json(outputs, "o");
        auto r = resolve_outputs(a, t);
        REQUIRE_FALSE(r.ok());
        return r.error().message;
    };
    CHECK(bad(R"(["{projectRoot}/../../outside"])") ==
          "a:test: output \"{projectRoot}/../../outside\" steps up with \"..\"; write it without, as "
          "\"{workspaceRoot}/outside\"" + where);
    CHECK(bad(R"(["{projectRoot}/../../.."])") ==
          "a:test: output \"{projectRoot}/../../..\" resolves to \"packages/a/../../..\", which leads outside the "
          "workspace; name a path inside it" + where);
    CHECK(bad(R"([".."])").find("output \"..\" resolves to \"..\", which leads outside the workspace") !=
          std::string::npos);
    CHECK(bad(R"(["/"])").find("output \"/\" is an absolute path; write it from the workspace's root or the "
                               "project's") != std::string::npos);
    for (const char* root : {R"(["{workspaceRoot}"])", R"(["{workspaceRoot}/"])", R"(["{projectRoot}/../.."])"})
        CHECK(bad(root).find("names the whole workspace, which qk would clear to restore the task") != std::string::npos);
    CHECK(bad(R"(["{workspaceRoot}/.git/hooks"])") ==
          "a:test: output \"{workspaceRoot}/.git/hooks\" lies in .git, which is git's; a task's outputs are its own "
          "files" + where);
    CHECK(bad(R"(["{workspaceRoot}/.QK/cache"])").find("lies in .qk, which is qk's own state") != std::string::npos);
    t.outputs = *parse_json(R"(["{workspaceRoot}/node_modules/.prisma/client"])", "o");  // prisma generate's
    CHECK(resolve_outputs(a, t)->paths == Strings{"node_modules/.prisma/client"});
    t.outputs = *parse_json(R"(["dist/{workspaceRoot}"])", "o");
    CHECK_FALSE(resolve_outputs(a, t).ok());
    t.outputs = *parse_json(R"([1])", "o");
    CHECK(resolve_outputs(a, t).error().message == "a:test: outputs holds a number, expected paths");

    // {project.x}: the project's merged configuration, a target's fields from that target; objects,
    // and what is not there, drop the output.
    t.outputs = *parse_json(R"(["{project.root}/out", "{project.name}-x/{project.targets.build.executor}",
                               "{project.targets.build}", "{project.targets.nope.executor}", "{project.nothing}"])",
                            "o");
    auto project = resolve_outputs(a, t);
    REQUIRE(project.ok());
    CHECK(project->paths == Strings{"packages/a/out", "a-x/" + ws->target("a", "build").value()->executor});
    CHECK(project->dropped ==
          Strings{"{project.targets.build}", "{project.targets.nope.executor}", "{project.nothing}"});
}
