// The task graph: requested tasks, dependsOn in all its forms, order, cycles, and request errors.
#include <catch2/catch.hpp>

#include "qk/workspace/task_graph.hpp"

using namespace qk::workspace;
using qk::Result;

namespace {

using Strings = std::vector<std::string>;

struct Fixture {
    Workspace ws;
    ProjectGraph graph;
};

Fixture load(const std::string& name)
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces" / name);
    INFO((ws.ok() ? std::string() : ws.error().message));
    REQUIRE(ws.ok());
    return Fixture{std::move(*ws), ProjectGraph()};
}

// The graph must point at the Workspace where it finally lives.
ProjectGraph graph_of(const Workspace& ws)
{
    auto g = ProjectGraph::build(ws);
    REQUIRE(g.ok());
    return std::move(*g);
}

Result<TaskGraph> tasks(const ProjectGraph& g, Strings targets, Strings projects = {}, bool single = false,
                        bool exclude = false)
{
    TaskRequest r;
    r.targets = std::move(targets);
    r.projects = std::move(projects);
    r.single_task = single;
    r.exclude_task_dependencies = exclude;
    return TaskGraph::build(g, r);
}

TaskGraph ok(Result<TaskGraph> r)
{
    INFO((r.ok() ? std::string() : r.error().message));
    REQUIRE(r.ok());
    return std::move(*r);
}

std::string error_of(const Result<TaskGraph>& r)
{
    REQUIRE_FALSE(r.ok());
    return r.error().message;
}

Strings ids(const TaskGraph& g)
{
    Strings out;
    for (const auto& t : g.tasks())
        out.push_back(t.id);
    return out;
}

Strings ids(const TaskGraph& g, const std::vector<std::size_t>& indices)
{
    Strings out;
    for (std::size_t i : indices)
        out.push_back(g.tasks()[i].id);
    return out;
}

Strings deps_of(const TaskGraph& g, const std::string& id)
{
    const Task* t = g.find(id);
    REQUIRE(t);
    return ids(g, t->deps);
}

}  // namespace

TEST_CASE("task graph: ^build through a chain of three, in dependency order", "[workspace]")
{
    Fixture f = load("pnpm-chain");
    ProjectGraph g = graph_of(f.ws);
    TaskGraph tg = ok(tasks(g, {"build"}));
    CHECK(ids(tg) == Strings{"c:build", "b:build", "a:build"});
    CHECK(deps_of(tg, "a:build") == Strings{"b:build"});
    CHECK(deps_of(tg, "b:build") == Strings{"c:build"});
    CHECK(deps_of(tg, "c:build").empty());
    CHECK(ids(tg, tg.find("c:build")->dependents) == Strings{"b:build"});
    CHECK(ids(tg, tg.roots()) == Strings{"c:build"});
    CHECK(ids(tg, tg.transitive_deps(*tg.index("a:build"))) == Strings{"c:build", "b:build"});
    for (const auto& t : tg.tasks())
        CHECK(t.requested);
    const Task& a = *tg.find("a:build");
    CHECK(a.project_name(f.ws) == "a");
    CHECK(a.target == f.ws.find_project("a")->find_target("build"));
    CHECK(a.configuration.empty());

    // Asking for a alone pulls in what it depends on.
    TaskGraph only_a = ok(tasks(g, {"build"}, {"a"}));
    CHECK(ids(only_a) == Strings{"c:build", "b:build", "a:build"});
    CHECK(only_a.find("a:build")->requested);
    CHECK_FALSE(only_a.find("b:build")->requested);

    TaskGraph excluded = ok(tasks(g, {"build"}, {"a"}, false, true));
    CHECK(ids(excluded) == Strings{"a:build"});
    CHECK(excluded.tasks()[0].deps.empty());
}

TEST_CASE("task graph: several targets, ties broken by the order the tasks were asked for", "[workspace]")
{
    Fixture f = load("pnpm-chain");
    ProjectGraph g = graph_of(f.ws);
    TaskGraph tg = ok(tasks(g, {"build", "test"}));
    CHECK(ids(tg) == Strings{"a:test", "c:build", "b:build", "a:build", "c:test"});
}

TEST_CASE("task graph: unknown projects and targets are errors before anything runs", "[workspace]")
{
    Fixture f = load("pnpm-chain");
    ProjectGraph g = graph_of(f.ws);
    CHECK(error_of(tasks(g, {})) == "no target to run: name one or more with -t (for example -t build,test)");
    CHECK(error_of(tasks(g, {"build"}, {"nonexistent"})) ==
          "unknown project \"nonexistent\"; the workspace's projects are: a, b, c");
    CHECK(error_of(tasks(g, {"build"}, {"zz-*"})) == "no project matches \"zz-*\"");
    CHECK(error_of(tasks(g, {"deploy"})) ==
          "no project has a target named deploy; the workspace's targets are: build, postbuild, prebuild, test");
    // A misspelling gets the closest names (edit distance), in every form of the error.
    CHECK(error_of(tasks(g, {"tset"})) == "no project has a target named tset (did you mean \"test\"?); the "
                                          "workspace's targets are: build, postbuild, prebuild, test");
    CHECK(error_of(tasks(g, {"biuld"}, {"c"})) ==
          "project \"c\" has no target \"biuld\" (did you mean \"build\"?); its targets are: build, test");
    CHECK(error_of(tasks(g, {"biuld"}, {"a"}, true)) ==
          "project \"a\" has no target \"biuld\" (did you mean \"build\"?); its targets are: build, prebuild, test");
    CHECK(error_of(tasks(g, {"build"}, {"aa"})) ==
          "unknown project \"aa\" (did you mean \"a\"?); the workspace's projects are: a, b, c");
    CHECK(error_of(tasks(g, {"postbuild"}, {"c"})) ==
          "project \"c\" has no target \"postbuild\"; its targets are: build, test");
    CHECK(error_of(tasks(g, {"lint"}, {"a"}, true)) ==
          "project \"a\" has no target \"lint\"; its targets are: build, prebuild, test");
    CHECK(error_of(tasks(g, {"build"}, {"packages/a"}, true)) ==
          "unknown project \"packages/a\"; the workspace's projects are: a, b, c");  // qk run takes names only
    TaskGraph run = ok(tasks(g, {"build"}, {"b"}, true));
    CHECK(ids(run) == Strings{"c:build", "b:build"});
    CHECK(run.find("b:build")->requested);
    // Without naming projects, those lacking a target are skipped.
    CHECK(ids(ok(tasks(g, {"test"}))) == Strings{"a:test", "c:test"});
}

TEST_CASE("task graph: dependsOn strings — ^target passing through projects without it, self, project:target",
          "[workspace]")
{
    Fixture f = load("depends-on");
    ProjectGraph g = graph_of(f.ws);
    TaskGraph tg = ok(tasks(g, {"build"}, {"app"}));
    // lib-mid has no build: ^build goes on to lib-b. "generate:types" is a target of app with a colon
    // (no project is called "generate"); "tools:setup" is tools' setup.
    CHECK(ids(tg) == Strings{"lib-a:build", "lib-b:build", "app:codegen", "app:generate:types", "tools:setup",
                             "app:build"});
    CHECK(deps_of(tg, "app:build") ==
          Strings{"lib-a:build", "lib-b:build", "app:codegen", "app:generate:types", "tools:setup"});
}

TEST_CASE("task graph: dependsOn objects — projects with tags and exclusions, dependencies, globs", "[workspace]")
{
    Fixture f = load("depends-on");
    ProjectGraph g = graph_of(f.ws);
    TaskGraph verify = ok(tasks(g, {"verify"}, {"app"}));
    CHECK(deps_of(verify, "app:verify") == Strings{"lib-b:check", "tools:setup"});
    const Target& v = *f.ws.find_project("app")->find_target("verify");
    REQUIRE(v.depends_on.size() == 2);
    CHECK(v.depends_on[0].scope == DependsOn::Scope::projects);
    CHECK(v.depends_on[0].projects == Strings{"tag:checked", "!lib-a"});
    CHECK(v.depends_on[1].projects == Strings{"tools"});
    CHECK(v.depends_on[1].params == "forward");

    TaskGraph release = ok(tasks(g, {"release"}, {"app"}));
    CHECK(deps_of(release, "app:release") == Strings{"lib-a:build", "lib-b:build"});

    TaskGraph bundle = ok(tasks(g, {"bundle"}, {"app"}));
    CHECK(deps_of(bundle, "app:bundle") == Strings{"app:bundle-css", "app:bundle-js"});

    TaskGraph serve = ok(tasks(g, {"serve"}, {"app"}));
    const Task& s = *serve.find("app:serve");
    CHECK(s.deps.empty());
    CHECK(ids(serve, s.continuous_deps) == Strings{"app:dev-server"});

    TaskGraph loop = ok(tasks(g, {"loop"}, {"app"}));
    CHECK(ids(loop) == Strings{"app:loop"});  // a task never depends on itself
    CHECK(loop.tasks()[0].deps.empty());

    CHECK(error_of(tasks(g, {"broken-ref"}, {"app"})) ==
          "app:broken-ref: dependsOn names the project \"nonexistent\", which matches no project; fix the name in "
          "its dependsOn");
}

TEST_CASE("task graph: a dependsOn cycle is an error naming it", "[workspace]")
{
    Fixture f = load("cycle");
    ProjectGraph g = graph_of(f.ws);
    CHECK(error_of(tasks(g, {"build"})) ==
          "dependsOn forms a cycle: a:build -> b:build -> a:build; remove one of these dependencies");
    CHECK(error_of(tasks(g, {"build"}, {"b"})) ==
          "dependsOn forms a cycle: b:build -> a:build -> b:build; remove one of these dependencies");
    CHECK(ids(ok(tasks(g, {"test"}))) == Strings{"b:test"});
}

TEST_CASE("task graph: a task takes its target's defaultConfiguration", "[workspace]")
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/target-defaults");
    REQUIRE(ws.ok());
    ProjectGraph g = graph_of(*ws);
    TaskGraph tg = ok(tasks(g, {"all"}, {"p1"}));
    CHECK(ids(tg) == Strings{"p1:build", "p1:test", "p1:all"});
    CHECK(tg.find("p1:test")->configuration == "watch");
    CHECK(tg.find("p1:build")->configuration.empty());
}
