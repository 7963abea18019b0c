// Bad configuration: each error names the file, line and column, and says what was expected.
#include <catch2/catch.hpp>

#include "qk/workspace/tokens.hpp"
#include "qk/workspace/workspace.hpp"
#include "workspace/config/config_merge.hpp"

using namespace qk::workspace;

namespace {

std::string load_error(const std::string& name)
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces" / name);
    REQUIRE_FALSE(ws.ok());
    return ws.error().message;
}

}  // namespace

TEST_CASE("malformed JSON in a workspace file names file:line:column", "[workspace]")
{
    CHECK(load_error("malformed/missing-comma") ==
          "packages/a/project.json:5:5: malformed JSON: expected ',' or '}' after a property value, found a string");
    CHECK(load_error("malformed/unterminated-comment") == "nx.json:2:3: malformed JSON: unterminated /* comment");
}

TEST_CASE("configuration files with trailing commas load, as Nx reads them", "[workspace]")
{
    // nx.json, project.json and package.json (scripts and "nx") each end arrays and objects with a comma.
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/trailing-commas");
    INFO((ws.ok() ? std::string() : ws.error().message));
    REQUIRE(ws.ok());
    CHECK(ws->nx().named_inputs.dump() == R"({"a":["{projectRoot}/src/**/*"]})");
    REQUIRE(ws->projects().size() == 2);
    const Project& a = ws->projects()[0];
    CHECK(a.name == "a");
    CHECK(a.tags == std::vector<std::string>{"x", "y"});
    REQUIRE(a.targets.size() == 1);
    CHECK(a.targets[0].name == "build");
    REQUIRE(a.targets[0].inputs);
    CHECK(a.targets[0].inputs->dump() == R"(["a"])");
    const Project& b = ws->projects()[1];
    CHECK(b.name == "b");
    CHECK(b.tags == std::vector<std::string>{"npm:public", "z"});  // Nx tags a package not private
    REQUIRE(b.find_target("test") != nullptr);
}

TEST_CASE("malformed YAML in pnpm-workspace.yaml names line:column", "[workspace]")
{
    // libyaml's words (the one YAML reader, as for the lockfile), at the place it stopped.
    CHECK(load_error("malformed/yaml") == "pnpm-workspace.yaml:2:1: malformed YAML: did not find expected ',' or ']' "
                                          "(while parsing a flow sequence at line 1 column 11); fix it: pnpm reads the "
                                          "same file");
    CHECK(load_error("malformed/yaml-shape") == "pnpm-workspace.yaml:1:11: packages must be a list of globs, such as\n"
                                                "  packages:\n    - \"packages/*\"");
}

TEST_CASE("a known key of the wrong type names where it is and what it must be", "[workspace]")
{
    CHECK(load_error("malformed/shape") ==
          "libs/a/project.json:5:16: targets.build.cache must be true or false, found the string \"yes\"");
    CHECK(load_error("malformed/command-and-executor") ==
          "libs/a/project.json: targets.build: a target cannot have both \"executor\" and \"command\"; keep one of "
          "them");
    CHECK(load_error("malformed/token") ==
          "project \"a\" (libs/a), target \"build\".options.out: \"dist/{workspaceRoot}/x\": the {workspaceRoot} "
          "token may only begin a value");
    CHECK(load_error("malformed/bad-extends") ==
          "nx.json:1:14: extends \"@acme/nx-preset/nx.json\" names no file (looked for "
          "node_modules/@acme/nx-preset/nx.json); install the package it names or fix the path");
    CHECK(load_error("duplicate-names") == "two projects are named \"same\": libs/one and libs/two; give one of them "
                                           "another \"name\" (in its project.json or package.json)");
}

TEST_CASE("an unknown project or target is an error listing what exists", "[workspace]")
{
    auto ws = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/pnpm-chain");
    REQUIRE(ws.ok());
    auto p = ws->project("nope");
    REQUIRE_FALSE(p.ok());
    CHECK(p.error().message == "unknown project \"nope\"; the workspace's projects are: a, b, c");
    auto t = ws->target("a", "biuld");
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().message ==
          "project \"a\" has no target \"biuld\" (did you mean \"build\"?); its targets are: build, prebuild, test");
    auto near = ws->project("bb");
    REQUIRE_FALSE(near.ok());
    CHECK(near.error().message ==
          "unknown project \"bb\" (did you mean \"b\"?); the workspace's projects are: a, b, c");
    auto t2 = ws->target("zz", "build");
    REQUIRE_FALSE(t2.ok());
    CHECK(t2.error().message == "unknown project \"zz\"; the workspace's projects are: a, b, c");
}

TEST_CASE("resolve_tokens says by its kind which misplaced {workspaceRoot} it refused", "[workspace]")
{
    Project p;
    p.root = "libs/a";
    p.name = "a";
    TokenPolicy refuse;
    refuse.other = TokenPolicy::Other::refuse;
    for (const TokenPolicy& policy : {TokenPolicy{}, refuse}) {
        auto inside = resolve_tokens("dist/{workspaceRoot}/x", p, policy);
        REQUIRE_FALSE(inside);
        CHECK(inside.error().kind == qk::ErrorKind::workspace_root_not_first);
        auto glued = resolve_tokens("!{workspaceRoot}dist", p, policy);
        REQUIRE_FALSE(glued);
        CHECK(glued.error().kind == qk::ErrorKind::workspace_root_without_slash);
    }
    auto braces = resolve_tokens("{workspaceRoot}/dist/{a,b}", p, refuse);
    REQUIRE_FALSE(braces);
    CHECK(braces.error().kind == qk::ErrorKind::other);
    CHECK(resolve_tokens("{workspaceRoot}/dist/{projectName}", p, refuse)->text == "dist/a");
}

TEST_CASE("an option's misplaced {workspaceRoot} is worded for a value, told apart by its kind", "[workspace]")
{
    using qk::workspace::detail::resolve_tokens_in_options;
    auto inside = resolve_tokens_in_options(Json::string("dist/{workspaceRoot}/x"), "libs/a", "a", "t.options.out");
    REQUIRE_FALSE(inside);
    CHECK(inside.error().message ==
          "t.options.out: \"dist/{workspaceRoot}/x\": the {workspaceRoot} token may only begin a value");
    auto glued = resolve_tokens_in_options(Json::string("{workspaceRoot}x"), "libs/a", "a", "t.options.out");
    REQUIRE_FALSE(glued);
    CHECK(glued.error().message == "t.options.out: \"{workspaceRoot}x\": {workspaceRoot} must be followed by /");
}
