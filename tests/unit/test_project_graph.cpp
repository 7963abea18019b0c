// The project graph: package.json dependencies on workspace packages, implicitDependencies with "!x".
#include <catch2/catch.hpp>

#include "qk/workspace/project_graph.hpp"

using namespace qk::workspace;

namespace {

using Strings = std::vector<std::string>;

Workspace load(const std::string& name)
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces" / name);
    INFO((ws.ok() ? std::string() : ws.error().message));
    REQUIRE(ws.ok());
    return std::move(*ws);
}

Strings deps(const ProjectGraph& g, const std::string& project)
{
    auto i = g.workspace().project_index(project);
    REQUIRE(i);
    Strings out;
    for (std::size_t d : g.dependencies(*i))
        out.push_back(g.workspace().projects()[d].name);
    return out;
}

}  // namespace

TEST_CASE("project graph: a chain of three through workspace:* and a plain version", "[workspace]")
{
    Workspace ws = load("pnpm-chain");
    auto g = ProjectGraph::build(ws);
    REQUIRE(g.ok());
    CHECK(deps(*g, "a") == Strings{"b"});
    CHECK(deps(*g, "b") == Strings{"c"});  // "c": "^1.0.0" is the workspace package too
    CHECK(deps(*g, "c").empty());
    std::size_t a = *ws.project_index("a"), b = *ws.project_index("b"), c = *ws.project_index("c");
    REQUIRE(g->edges(a).size() == 1);
    CHECK(g->edges(a)[0].kind == ProjectEdge::Kind::package_json);
    CHECK(g->edges(a)[0].via == "dependencies.b");
    CHECK(g->edges(b)[0].via == "devDependencies.c");
    CHECK(g->dependents(c) == std::vector<std::size_t>{b});
    CHECK(g->dependents(a).empty());
    CHECK(g->transitive_dependencies(a) == std::vector<std::size_t>{b, c});
    CHECK(g->transitive_dependencies(c).empty());
}

TEST_CASE("project graph: implicitDependencies add edges, and \"!x\" removes a package.json one", "[workspace]")
{
    Workspace ws = load("implicit");
    auto g = ProjectGraph::build(ws);
    REQUIRE(g.ok());
    CHECK(deps(*g, "x") == Strings{"v", "w", "y"});  // not z: "!z"
    const auto& edges = g->edges(*ws.project_index("x"));
    REQUIRE(edges.size() == 3);
    CHECK(edges[0].kind == ProjectEdge::Kind::implicit);  // v, by tag:extra
    CHECK(edges[1].kind == ProjectEdge::Kind::implicit);  // w
    CHECK(edges[2].kind == ProjectEdge::Kind::package_json);
    CHECK(edges[2].via == "dependencies.y");
    CHECK(deps(*g, "z").empty());
}

TEST_CASE("project graph: an implicit dependency on no project is an error", "[workspace]")
{
    Workspace ws = load("implicit-unknown");
    auto g = ProjectGraph::build(ws);
    REQUIRE_FALSE(g.ok());
    CHECK(g.error().message ==
          "project \"a\": implicitDependencies names \"ghost\", which matches no project; fix the name or remove it");
}

TEST_CASE("project graph: workspace ranges and project.json implicit dependencies", "[workspace]")
{
    Workspace ws = load("depends-on");
    auto g = ProjectGraph::build(ws);
    REQUIRE(g.ok());
    CHECK(deps(*g, "app") == Strings{"lib-a", "lib-mid"});
    CHECK(deps(*g, "lib-mid") == Strings{"lib-b"});
    Workspace pj = load("project-json-only");
    auto g2 = ProjectGraph::build(pj);
    REQUIRE(g2.ok());
    CHECK(deps(*g2, "web") == Strings{"ui"});
}

TEST_CASE("project graph: scoped package names, any version", "[workspace]")
{
    Workspace ws = load("package-workspaces");
    auto g = ProjectGraph::build(ws);
    REQUIRE(g.ok());
    CHECK(deps(*g, "@pw/one") == Strings{"@pw/two"});
    CHECK(deps(*g, "gen").empty());
}

TEST_CASE("match_projects follows Nx's findMatchingProjects", "[workspace]")
{
    Workspace ws = load("depends-on");
    auto names = [&](Strings patterns) {
        auto r = ws.match_projects(patterns);
        REQUIRE(r.ok());
        Strings out;
        for (std::size_t i : *r)
            out.push_back(ws.projects()[i].name);
        return out;
    };
    CHECK(names({"app"}) == Strings{"app"});
    CHECK(names({"lib-*"}) == Strings{"lib-a", "lib-b", "lib-mid"});
    CHECK(names({"lib-*", "!lib-mid"}) == Strings{"lib-a", "lib-b"});
    CHECK(names({"!lib-*"}) == Strings{"app", "tools"});  // a leading exclusion starts from all
    CHECK(names({"tag:checked"}) == Strings{"lib-a", "lib-b"});
    CHECK(names({"libs/*"}) == Strings{"lib-a", "lib-b", "lib-mid"});  // no name matches: by root
    CHECK(names({"directory:apps/*"}) == Strings{"app"});
    CHECK(names({"lib"}).empty());  // Nx's word match: "lib" is not a word of "lib-a" (hyphens join words)
    CHECK(names({"nothing"}).empty());
}
