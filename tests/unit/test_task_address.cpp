// Task addresses as written on the command line: targets with colons, configurations, ambiguity.
#include <catch2/catch.hpp>

#include "qk/workspace/task_address.hpp"
#include "qk/workspace/task_graph.hpp"

using namespace qk::workspace;

namespace {

Workspace colon_targets()
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/colon-targets");
    INFO((ws.ok() ? std::string() : ws.error().message));
    REQUIRE(ws.ok());
    return std::move(*ws);
}

TaskAddress parsed(const Workspace& ws, std::string_view text)
{
    auto a = parse_task_address(text, ws, "qk run");
    INFO((a.ok() ? std::string() : a.error().message));
    REQUIRE(a.ok());
    return *a;
}

}  // namespace

TEST_CASE("a target's name may hold colons: the longest target the project has wins", "[workspace][address]")
{
    Workspace ws = colon_targets();
    auto a = parsed(ws, "@scope/pkg:test:types");
    CHECK(a.project == "@scope/pkg");
    CHECK(a.target == "test:types");
    CHECK(a.configuration.empty());
    CHECK(a.ambiguity.empty());  // "test" has no configuration "types"

    a = parsed(ws, "@scope/pkg:test:types:ci");
    CHECK(a.target == "test:types");
    CHECK(a.configuration == "ci");

    a = parsed(ws, "@scope/pkg:build:production");
    CHECK(a.target == "build");
    CHECK(a.configuration == "production");

    a = parsed(ws, "@scope/pkg:test");
    CHECK(a.target == "test");
}

TEST_CASE("a task address that reads two ways says which it took and how to write the other", "[workspace][address]")
{
    Workspace ws = colon_targets();
    auto a = parsed(ws, "@scope/pkg:build:docs");
    CHECK(a.target == "build:docs");
    CHECK(a.ambiguity ==
          "\"@scope/pkg:build:docs\" is read as target \"build:docs\"; for target \"build\" with its configuration "
          "\"docs\", write @scope/pkg:build -c docs");
}

TEST_CASE("bad task addresses name what is wrong", "[workspace][address]")
{
    Workspace ws = colon_targets();
    for (const char* text : {"@scope/pkg", ":build", "@scope/pkg:", "@scope/pkg::x"}) {
        auto a = parse_task_address(text, ws, "qk run");
        REQUIRE_FALSE(a.ok());
        CHECK(a.error().message.find("is not a task; write it as project:target") != std::string::npos);
    }
    auto unknown = parse_task_address("nosuch:build", ws, "qk run");
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().message.find("unknown project \"nosuch\"") != std::string::npos);
}

TEST_CASE("qk run's task carries its configuration to the task and to dependencies that have it", "[workspace][address]")
{
    Workspace ws = colon_targets();
    auto graph = ProjectGraph::build(ws);
    REQUIRE(graph.ok());
    TaskRequest r;
    r.task = "@scope/pkg:build:docs";
    auto g = TaskGraph::build(*graph, r);
    REQUIRE(g.ok());
    REQUIRE(g->tasks().size() == 2);  // build:docs depends on build
    CHECK(g->find("@scope/pkg:build:docs")->requested);
    CHECK(g->notes().size() == 1);

    r.task = "@scope/pkg:test:types:ci";
    g = TaskGraph::build(*graph, r);
    REQUIRE(g.ok());
    CHECK(g->find("@scope/pkg:test:types")->configuration == "ci");

    r.task = "@scope/pkg:build";
    r.configuration = "production";
    g = TaskGraph::build(*graph, r);
    REQUIRE(g.ok());
    CHECK(g->find("@scope/pkg:build")->configuration == "production");

    r.task = "@scope/pkg:test:types:nosuch";
    r.configuration.clear();
    g = TaskGraph::build(*graph, r);
    REQUIRE_FALSE(g.ok());
    CHECK(g.error().message == "target @scope/pkg:test:types has no configuration \"nosuch\"; its configurations are: ci");
}
