// targetDefaults: which entry applies (executor key, then the exact name, then the longest glob key),
// how it fills a target in (the definition wins), compatibility, "...", nx:noop, extends.
#include <catch2/catch.hpp>

#include "qk/workspace/workspace.hpp"

using namespace qk::workspace;

namespace {

using Strings = std::vector<std::string>;

const Workspace& ws()
{
    static Workspace w = [] {
        auto r = Workspace::load(std::filesystem::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/target-defaults");
        INFO((r.ok() ? std::string() : r.error().message));
        REQUIRE(r.ok());
        return std::move(*r);
    }();
    return w;
}

const Target& target(const std::string& project, const std::string& name)
{
    auto t = ws().target(project, name);
    INFO((t.ok() ? std::string() : t.error().message));
    REQUIRE(t.ok());
    return **t;
}

std::string outputs(const Target& t)
{
    return t.outputs ? t.outputs->dump() : "(none)";
}

}  // namespace

TEST_CASE("targetDefaults: nx.json extends a base file shallowly", "[workspace]")
{
    CHECK(ws().files().nx_extends == "nx-base.json");
    // nx.json's targetDefaults replaces the base's whole; the base's namedInputs and
    // tasksRunnerOptions stay.
    CHECK(ws().nx().target_defaults.find("from-base-only") == nullptr);
    CHECK(ws().nx().named_inputs.dump() == R"({"fromBase":["{workspaceRoot}/base.txt"]})");
    CHECK(ws().nx().cacheable_operations == Strings{"pack"});
}

TEST_CASE("targetDefaults: the executor's key wins over the target's name", "[workspace]")
{
    const Target& build = target("p1", "build");
    CHECK(build.target_default_key == "nx:run-commands");
    CHECK(build.cache);
    CHECK(build.depends_on.empty());  // the "build" entry does not apply
    CHECK(outputs(build) == "(none)");
    CHECK(build.inputs->dump() == R"(["{projectRoot}/src/**"])");  // the definition's own inputs win
}

TEST_CASE("targetDefaults: the exact name, then the longest matching glob key", "[workspace]")
{
    CHECK(target("p2", "build").target_default_key == "build");
    CHECK(outputs(target("p2", "build")) == R"(["{projectRoot}/out"])");
    CHECK(target("p2", "build").depends_on.size() == 1);
    CHECK_FALSE(target("p2", "build").cache);

    CHECK(target("p2", "build-dev").target_default_key == "build-*");  // not "*ld-dev": as long, but later
    CHECK(outputs(target("p2", "build-dev")) == R"(["{projectRoot}/glob-short"])");
    CHECK(target("p2", "build-dev-ci").target_default_key == "build-*-ci");
    CHECK(outputs(target("p2", "build-dev-ci")) == R"(["{projectRoot}/glob-longest"])");
    CHECK(target("p2", "release-ci").target_default_key == "*-ci");
    CHECK(outputs(target("p2", "release-ci")) == R"(["{projectRoot}/glob-ci"])");
}

TEST_CASE("targetDefaults: an entry for another executor is not applied", "[workspace]")
{
    const Target& lint = target("p2", "lint");
    CHECK(lint.target_default_key.empty());
    CHECK(lint.executor == "nx:run-script");
    CHECK(outputs(lint) == "(none)");
}

TEST_CASE("targetDefaults: a default's command, options and configurations fill a target in", "[workspace]")
{
    const Target& test = target("p1", "test");
    CHECK(test.target_default_key == "test");
    CHECK(test.executor == "nx:run-commands");
    CHECK(test.options.dump() ==
          R"({"coverage":true,"ci":true,"command":"jest --config packages/p1/jest.config.ts"})");
    CHECK(test.configurations.dump() == R"({"watch":{"watch":true}})");
    CHECK(test.default_configuration == "watch");
    CHECK(test.run.commands == Strings{"jest --config packages/p1/jest.config.ts --coverage=true --ci=true"});
}

TEST_CASE("targetDefaults: \"...\" spreads the default's array into the target's", "[workspace]")
{
    const Target& pack = target("p1", "pack");
    CHECK(pack.target_default_key == "nx:run-commands");
    CHECK(pack.inputs->dump() == R"(["{projectRoot}/**/*","{workspaceRoot}/tool.json","{projectRoot}/extra"])");
    CHECK(pack.cache);
}

TEST_CASE("targetDefaults: legacy cacheableOperations when neither target nor default sets cache", "[workspace]")
{
    const Target& pack = target("p2", "pack");
    CHECK(pack.target_default_key == "pack");
    CHECK(pack.inputs->dump() == R"(["{projectRoot}/package.json"])");
    CHECK(pack.cache);
    CHECK_FALSE(target("p2", "build-dev").cache);
}

TEST_CASE("targetDefaults: a target with only dependsOn is nx:noop; one with nothing is dropped", "[workspace]")
{
    const Target& all = target("p1", "all");
    CHECK(all.executor == "nx:noop");
    CHECK(all.run.kind == RunSpec::Kind::noop);
    CHECK(all.run.problem.empty());
    CHECK(all.depends_on.size() == 2);
    CHECK(ws().find_project("p1")->find_target("nothing") == nullptr);
}

TEST_CASE("targetDefaults: whether the project's own layers name inputs and outputs", "[workspace]")
{
    // Named by the project (a "..." spread included): an edit of targetDefaults would not reach it.
    CHECK(target("p1", "build").names_inputs);
    CHECK_FALSE(target("p1", "build").names_outputs);
    CHECK(target("p1", "pack").names_inputs);
    // Taken from the entry: the script names neither.
    const Target& pack = target("p2", "pack");
    CHECK_FALSE(pack.names_inputs);
    CHECK_FALSE(pack.names_outputs);
    CHECK(pack.outputs->dump() == R"(["{projectRoot}/dist"])");
}
