// A project nested in a dependency's directory is that project's: ignoreReads' "^" globs match its
// files only if the task depends on it too (spec). The audit judges so by the path's project; enforce's
// walk must grant the same, leaving the nested project out of what it allows whole. Checked file by file:
// each file on disk is granted exactly when the rules allow reading it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "qk/rules/rules.hpp"
#include "qk/util/path_within.hpp"
#include "rules_grants_support.hpp"

using namespace qk;
using qk::test::find;
using rules::Finding;
using rules::Grant;

namespace {

// app depends on lib; lib's directory holds two projects of its own, lib-e2e (e2e/) and lib-inner
// (src/inner/). both depends on lib and lib-e2e.
struct NestedWorkspace : qk::test::PlannedWorkspace {
    NestedWorkspace() : PlannedWorkspace("qk-nested")
    {
        dir.write("packages/lib/package.json", R"({ "name": "lib" })");
        dir.write("packages/lib/project.json", R"({ "name": "lib", "targets": { "build": { "command": "true" } } })");
        dir.write("packages/lib/README.md", "lib\n");
        dir.write("packages/lib/docs/guide.md", "guide\n");
        dir.write("packages/lib/src/a.ts", "export {}\n");
        dir.write("packages/lib/e2e/project.json", R"({ "name": "lib-e2e", "targets": {} })");
        dir.write("packages/lib/e2e/spec.ts", "test\n");
        dir.write("packages/lib/e2e/fixtures/f.json", "{}\n");
        dir.write("packages/lib/src/inner/project.json", R"({ "name": "lib-inner", "targets": {} })");
        dir.write("packages/lib/src/inner/x.ts", "export {}\n");
        auto ignore = [](const std::string& glob) {
            return R"({ "command": "true", "inputs": [], "qk:ultracache": { "ignoreReads": [")" + glob + R"("] } })";
        };
        dir.write("packages/app/package.json", R"({ "name": "app", "dependencies": { "lib": "workspace:*" } })");
        dir.write("packages/app/project.json", R"({ "name": "app", "targets": {
  "all": )" + ignore("^**") + R"(,
  "src": )" + ignore("^src/**") + R"(,
  "ts": )" + ignore("^**/*.ts") + R"(,
  "named": )" + ignore("^e2e/spec.ts") + R"(,
  "deps": { "command": "true", "inputs": ["^default"] }
} })");
        dir.write("packages/both/package.json", R"({ "name": "both" })");
        dir.write("packages/both/project.json", R"({ "name": "both", "implicitDependencies": ["lib", "lib-e2e"],
  "targets": { "all": )" + ignore("^**") + R"( } })");
        plan({"all", "src", "ts", "named", "deps"});
    }

    // Every regular file under packages/lib, workspace-relative.
    std::vector<std::string> lib_files() const
    {
        std::vector<std::string> out;
        for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path / "packages/lib"))
            if (e.is_regular_file())
                out.push_back(std::filesystem::relative(e.path(), dir.path).string());
        std::sort(out.begin(), out.end());
        return out;
    }
};

bool granted(const std::vector<Grant>& grants, const std::string& rel)
{
    return std::any_of(grants.begin(), grants.end(), [&](const Grant& g) {
        return g.path == rel || (g.directory && qk::is_under(rel, g.path));
    });
}

// Audit and enforce agree on every file of lib's directory: granted exactly when the rules allow it.
// Returns the files allowed.
std::vector<std::string> agreeing(NestedWorkspace& ws, const rules::Rules& r)
{
    auto grants = r.grants();
    std::vector<std::string> allowed;
    for (const std::string& f : ws.lib_files()) {
        INFO(f);
        bool reads = r.read(ws.abs(f)).finding == Finding::none;
        CHECK(granted(grants, f) == reads);
        if (reads)
            allowed.push_back(f);
    }
    return allowed;
}

}  // namespace

TEST_CASE("nested projects: ^** leaves out a project nested in the dependency, in enforce's walk as in the audit",
          "[rules][grants]")
{
    NestedWorkspace ws;
    auto r = ws.rules_of("app:all");
    CHECK(agreeing(ws, r) == std::vector<std::string>{"packages/lib/README.md", "packages/lib/docs/guide.md",
                                                        "packages/lib/package.json", "packages/lib/project.json",
                                                        "packages/lib/src/a.ts"});
    CHECK(r.read(ws.abs("packages/lib/e2e/spec.ts")).finding == Finding::read_outside_inputs);
    auto grants = r.grants();
    // Not lib's directory whole, nor src (lib-inner lies beneath it); what lies beside them is whole.
    CHECK_FALSE(find(grants, "packages/lib"));
    CHECK_FALSE(find(grants, "packages/lib/src"));
    CHECK_FALSE(find(grants, "packages/lib/e2e"));
    const Grant* docs = find(grants, "packages/lib/docs");
    REQUIRE(docs);
    CHECK(docs->directory);
}

TEST_CASE("nested projects: other ^ globs, by directory, file by file or named whole, leave them out too",
          "[rules][grants]")
{
    NestedWorkspace ws;
    CHECK(agreeing(ws, ws.rules_of("app:src")) == std::vector<std::string>{"packages/lib/src/a.ts"});
    CHECK(agreeing(ws, ws.rules_of("app:ts")) == std::vector<std::string>{"packages/lib/src/a.ts"});
    // A path named whole inside the nested project is not lib's.
    auto named = ws.rules_of("app:named");
    CHECK(agreeing(ws, named).empty());
    CHECK_FALSE(find(named.grants(), "packages/lib/e2e/spec.ts"));
}

TEST_CASE("nested projects: a nested project the task depends on too is matched from its own root",
          "[rules][grants]")
{
    NestedWorkspace ws;
    auto r = ws.rules_of("both:all");
    auto allowed = agreeing(ws, r);
    CHECK(std::find(allowed.begin(), allowed.end(), "packages/lib/e2e/spec.ts") != allowed.end());
    CHECK(std::find(allowed.begin(), allowed.end(), "packages/lib/src/inner/x.ts") == allowed.end());
    const Grant* e2e = find(r.grants(), "packages/lib/e2e");
    REQUIRE(e2e);
    CHECK(e2e->directory);
}

TEST_CASE("nested projects: a ^ input holds the dependency's own files, not the nested project's",
          "[rules][grants]")
{
    NestedWorkspace ws;
    auto r = ws.rules_of("app:deps");
    auto allowed = agreeing(ws, r);
    CHECK(std::find(allowed.begin(), allowed.end(), "packages/lib/src/a.ts") != allowed.end());
    CHECK(std::find(allowed.begin(), allowed.end(), "packages/lib/e2e/spec.ts") == allowed.end());
    CHECK(std::find(allowed.begin(), allowed.end(), "packages/lib/src/inner/x.ts") == allowed.end());
}
