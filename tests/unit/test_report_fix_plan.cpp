// qk report fix's plan (src/cli/report_fix_plan.hpp): where each suggested input and output goes. Once
// into targetDefaults for kSharedTasks tasks of one target taking the key from the entry named after it
// (never one keyed by an executor), once into sharedGlobals for a workspace file many tasks take, else
// into each target; files read together in one directory as one glob only when it selects exactly them.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli/report_fix_plan.hpp"
#include "test_support.hpp"

using qk::cli::FixEdit;
using qk::cli::FixPlan;
using Strings = std::vector<std::string>;

namespace {

// A workspace of pnpm packages under packages/, each a project.json of the targets given (JSON texts).
struct FixWorkspace {
    qk::test::TempDir dir{"qk-report-fix"};

    explicit FixWorkspace(const std::string& nx_json)
    {
        dir.write("nx.json", nx_json);
        dir.write("pnpm-workspace.yaml", "packages:\n  - packages/*\n");
        dir.write("package.json", R"({"name": "root", "private": true})");
    }
    void project(const std::string& name, const std::string& targets)
    {
        dir.write("packages/" + name + "/package.json", R"({"name": ")" + name + R"("})");
        dir.write("packages/" + name + "/project.json", R"({"name": ")" + name + R"(", "targets": )" + targets + "}\n");
    }
    FixPlan plan(const qk::audit::RunAudit& report, bool declare_network = false) const
    {
        auto ws = qk::workspace::Workspace::load(dir.path);
        INFO((ws ? std::string() : ws.error().message));
        REQUIRE(ws);
        return qk::cli::plan_report_fix(report, *ws, qk::cli::scan_when_asked(*ws), declare_network);
    }
};

// A report in which each task given asks to declare `values` under `declare`.
qk::audit::RunAudit report(const Strings& tasks, const std::string& declare, const Strings& values)
{
    qk::audit::RunAudit r;
    for (const std::string& t : tasks) {
        qk::audit::TaskAudit task;
        task.task = t;
        const char* finding = declare == "inputs" ? "readsOutsideInputs" : "strayWrites";
        task.given_suggestions =
            std::vector<qk::audit::Suggestion>{{finding, declare, values, {}, values.size(), {}, {}}};
        r.tasks.push_back(std::move(task));
    }
    return r;
}

// Each edit as "file path.key: inherited | values", to compare whole plans at a glance.
Strings described(const FixPlan& plan)
{
    Strings out;
    for (const FixEdit& e : plan.edits) {
        std::string line = e.file + " ";
        for (const std::string& step : e.path)
            line += step + ".";
        line += e.key + ":";
        for (const std::string& i : e.inherited)
            line += " " + i;
        line += " |";
        for (const std::string& v : e.values)
            line += " " + v;
        out.push_back(line);
    }
    return out;
}

constexpr const char* kCommand = R"({"test": {"command": "true"}})";

}  // namespace

TEST_CASE("report fix plan: a file three tasks of one target need goes once into its targetDefaults",
          "[cli][report_fix]")
{
    FixWorkspace w(R"({"targetDefaults": {"test": {"cache": true}}})");
    for (const char* p : {"a", "b", "c"})
        w.project(p, kCommand);
    w.project("d", R"({"test": {"command": "true", "inputs": ["{projectRoot}/src/**/*"]}})");  // names its own
    FixPlan plan =
        w.plan(report({"a:test", "b:test", "c:test", "d:test"}, "inputs", {"{projectRoot}/vitest.setup.ts"}));
    // The entry named no inputs: its tasks took Nx's default, held before the new value.
    CHECK(
        described(plan) ==
        Strings{
            R"(nx.json targetDefaults.test.inputs: "default" "^default" | {projectRoot}/vitest.setup.ts)",
            R"(packages/d/project.json targets.test.inputs: "{projectRoot}/src/**/*" | {projectRoot}/vitest.setup.ts)",
        });
    CHECK(plan.by_hand.empty());
}

TEST_CASE("report fix plan: fewer than three tasks of a target get an edit each", "[cli][report_fix]")
{
    FixWorkspace w(R"({"targetDefaults": {"test": {"inputs": ["default"]}}})");
    for (const char* p : {"a", "b", "c"})
        w.project(p, kCommand);
    FixPlan plan = w.plan(report({"a:test", "b:test"}, "inputs", {"{projectRoot}/vitest.setup.ts"}));
    CHECK(described(plan) ==
          Strings{
              R"(packages/a/project.json targets.test.inputs: "default" | {projectRoot}/vitest.setup.ts)",
              R"(packages/b/project.json targets.test.inputs: "default" | {projectRoot}/vitest.setup.ts)",
          });
}

TEST_CASE("report fix plan: an output three builds write goes into targetDefaults, made where missing",
          "[cli][report_fix]")
{
    FixWorkspace w(R"({"namedInputs": {"default": ["{projectRoot}/**/*"]}})");
    for (const char* p : {"a", "b", "c", "d"})
        w.project(p, R"({"build": {"command": "true"}})");
    qk::audit::RunAudit r = report({"b:build", "c:build", "d:build"}, "outputs", {"{projectRoot}/build.log"});
    // A file outside the project is each task's own output, never every build's.
    r.tasks.push_back(report({"a:build"}, "outputs", {"{projectRoot}/build.log", "{workspaceRoot}/tmp/shared.log"})
                          .tasks.front());
    // a's project.json names outputs now, in place of the entry's: its list holds build.log as well, or the
    // edit would take it away again and a second round would be needed (issue 39).
    CHECK(described(w.plan(r)) ==
          Strings{
              "nx.json targetDefaults.build.outputs: | {projectRoot}/build.log",
              "packages/a/project.json targets.build.outputs: | {projectRoot}/build.log {workspaceRoot}/tmp/shared.log",
          });
}

TEST_CASE("report fix plan: tasks that get a list of their own are planned without the targetDefaults entry",
          "[cli][report_fix]")
{
    // Five tests take their inputs from targetDefaults.test; d and e also read a file of their own, so their
    // project.json gets inputs, which replace the entry's for them: three takers are left for the entry.
    FixWorkspace w(R"({"targetDefaults": {"test": {"cache": true}}})");
    for (const char* p : {"a", "b", "c", "d", "e"})
        w.project(p, kCommand);
    qk::audit::RunAudit r = report({"a:test", "b:test", "c:test"}, "inputs", {"{projectRoot}/vitest.setup.ts"});
    for (const char* t : {"d:test", "e:test"})
        r.tasks.push_back(
            report({t}, "inputs", {"{projectRoot}/vitest.setup.ts", "{projectRoot}/fixtures.json"}).tasks.front());
    CHECK(described(w.plan(r)) ==
          Strings{
              R"(nx.json targetDefaults.test.inputs: "default" "^default" | {projectRoot}/vitest.setup.ts)",
              R"(packages/d/project.json targets.test.inputs: "default" "^default" | {projectRoot}/vitest.setup.ts {projectRoot}/fixtures.json)",
              R"(packages/e/project.json targets.test.inputs: "default" "^default" | {projectRoot}/vitest.setup.ts {projectRoot}/fixtures.json)",
          });
    // With only two takers left the entry is not worth an edit: each gets its own list, whole.
    r.tasks.erase(r.tasks.begin());
    CHECK(described(w.plan(r)) ==
          Strings{
              R"(packages/b/project.json targets.test.inputs: "default" "^default" | {projectRoot}/vitest.setup.ts)",
              R"(packages/c/project.json targets.test.inputs: "default" "^default" | {projectRoot}/vitest.setup.ts)",
              R"(packages/d/project.json targets.test.inputs: "default" "^default" | {projectRoot}/vitest.setup.ts {projectRoot}/fixtures.json)",
              R"(packages/e/project.json targets.test.inputs: "default" "^default" | {projectRoot}/vitest.setup.ts {projectRoot}/fixtures.json)",
          });
}

TEST_CASE("report fix plan: tasks taking an executor's targetDefaults entry get an edit each", "[cli][report_fix]")
{
    // The "nx:run-commands" entry applies before "test": an entry by the name would reach none of them.
    FixWorkspace w(R"({"targetDefaults": {"nx:run-commands": {"outputs": ["{projectRoot}/out"]},
                                           "test": {"outputs": ["{projectRoot}/unused"]}}})");
    for (const char* p : {"a", "b", "c"})
        w.project(p, kCommand);
    FixPlan plan = w.plan(report({"a:test", "b:test", "c:test"}, "outputs", {"{projectRoot}/coverage"}));
    REQUIRE(plan.edits.size() == 3);
    for (const FixEdit& e : plan.edits) {
        CHECK(e.file.ends_with("/project.json"));
        CHECK(e.inherited == Strings{R"("{projectRoot}/out")"});
        CHECK(e.values == Strings{"{projectRoot}/coverage"});
    }
}

TEST_CASE("report fix plan: no entry by the target's name is made over a glob's", "[cli][report_fix]")
{
    // "tes*" does not fit these commands (another executor), so none applies to them; but an entry named
    // "test" would take its place for the tasks of other projects it fits.
    FixWorkspace w(R"({"targetDefaults": {"tes*": {"executor": "nx:run-script", "outputs": ["{projectRoot}/o"]}}})");
    for (const char* p : {"a", "b", "c"})
        w.project(p, kCommand);
    FixPlan plan = w.plan(report({"a:test", "b:test", "c:test"}, "outputs", {"{projectRoot}/coverage"}));
    REQUIRE(plan.edits.size() == 3);
    for (const FixEdit& e : plan.edits)
        CHECK(e.file.ends_with("/project.json"));
}

TEST_CASE("report fix plan: a workspace file only one target's tasks read goes into its entry", "[cli][report_fix]")
{
    // lint's entry exists: the eslint config is lint's input, not every task's (sharedGlobals).
    FixWorkspace w(R"({"namedInputs": {"sharedGlobals": [], "default": ["{projectRoot}/**/*", "sharedGlobals"]},
  "targetDefaults": {"lint": {"inputs": ["default"]}}})");
    for (const char* p : {"a", "b", "c"})
        w.project(p, R"({"lint": {"command": "true"}, "build": {"command": "true"}})");
    qk::audit::RunAudit r = report({"a:lint", "b:lint", "c:lint"}, "inputs", {"{workspaceRoot}/eslint.config.mjs"});
    qk::audit::RunAudit builds =
        report({"a:build", "b:build", "c:build", "a:lint"}, "inputs", {"{workspaceRoot}/tsconfig.base.json"});
    r.tasks.insert(r.tasks.end(), builds.tasks.begin(), builds.tasks.end());
    CHECK(described(w.plan(r)) == Strings{
                                      "nx.json namedInputs.sharedGlobals: | {workspaceRoot}/tsconfig.base.json",
                                      "nx.json targetDefaults.lint.inputs: | {workspaceRoot}/eslint.config.mjs",
                                  });
}

TEST_CASE("report fix plan: what nx.json takes from the file it extends is not replaced", "[cli][report_fix]")
{
    // nx.json names neither namedInputs nor targetDefaults: writing either there would drop the base's.
    FixWorkspace w(R"({"extends": "./nx-base.json"})");
    w.dir.write("nx-base.json", R"({"targetDefaults": {"build": {"cache": true}},
  "namedInputs": {"sharedGlobals": ["{workspaceRoot}/base.txt"], "default": ["{projectRoot}/**/*", "sharedGlobals"]}})");
    for (const char* p : {"a", "b", "c"})
        w.project(p, R"({"build": {"command": "true", "inputs": ["default"]}})");
    qk::audit::RunAudit r = report({"a:build", "b:build", "c:build"}, "outputs", {"{projectRoot}/build.log"});
    // base.txt is theirs already, through the base's sharedGlobals; notes.txt goes into each target.
    qk::audit::RunAudit in =
        report({"a:build", "b:build", "c:build"}, "inputs", {"{workspaceRoot}/base.txt", "{workspaceRoot}/notes.txt"});
    r.tasks.insert(r.tasks.end(), in.tasks.begin(), in.tasks.end());
    FixPlan plan = w.plan(r);
    REQUIRE(plan.edits.size() == 6);
    for (const FixEdit& e : plan.edits) {
        CHECK(e.file.ends_with("/project.json"));
        CHECK(e.values == Strings{e.key == "inputs" ? "{workspaceRoot}/notes.txt" : "{projectRoot}/build.log"});
    }
}

TEST_CASE("report fix plan: what the declarations hold already is not planned again", "[cli][report_fix]")
{
    FixWorkspace w(R"({"namedInputs": {"sharedGlobals": ["{workspaceRoot}/shared.txt"],
                                      "default": ["{projectRoot}/**/*", "sharedGlobals"]},
  "targetDefaults": {"build": {"outputs": ["{projectRoot}/build.log"]}}})");
    for (const char* p : {"a", "b", "c"})
        w.project(p, R"({"build": {"command": "true", "inputs": ["default", "{projectRoot}/config/*.json"]}})");
    qk::audit::RunAudit r = report({"a:build", "b:build", "c:build"}, "inputs",
                                   {"{workspaceRoot}/shared.txt", "{projectRoot}/config/a.json"});
    qk::audit::RunAudit out = report({"a:build", "b:build", "c:build"}, "outputs", {"{projectRoot}/build.log"});
    r.tasks.insert(r.tasks.end(), out.tasks.begin(), out.tasks.end());
    FixPlan plan = w.plan(r);
    CHECK(described(plan).empty());
}

TEST_CASE("report fix plan: five files read in one directory are one glob when it selects exactly them",
          "[cli][report_fix]")
{
    FixWorkspace w(R"({"namedInputs": {"default": ["{projectRoot}/**/*"]}})");
    w.project("a", R"({"build": {"command": "true"}})");
    Strings reads;
    for (const char* f : {"1", "2", "3", "4", "5"}) {
        w.dir.write(std::string("packages/a/config/") + f + ".json", "{}\n");
        reads.push_back(std::string("{projectRoot}/config/") + f + ".json");
    }
    reads.emplace_back("{workspaceRoot}/notes.txt");
    w.dir.write("packages/a/config/nested/deeper.json", "{}\n");  // not directly in config/: no glob selects it

    SECTION("every file of the directory: dir/*")
    {
        CHECK(w.plan(report({"a:build"}, "inputs", reads)).edits.at(0).values ==
              Strings{"{projectRoot}/config/*", "{workspaceRoot}/notes.txt"});
    }
    SECTION("every file with the extension: dir/*.ext")
    {
        w.dir.write("packages/a/config/README.md", "not read\n");
        CHECK(w.plan(report({"a:build"}, "inputs", reads)).edits.at(0).values ==
              Strings{"{projectRoot}/config/*.json", "{workspaceRoot}/notes.txt"});
    }
    SECTION("a file git ignores is not the key's: the glob still selects exactly what was read")
    {
        w.dir.write(".gitignore", "*.local.json\n");
        w.dir.write("packages/a/config/dev.local.json", "{}\n");
        CHECK(w.plan(report({"a:build"}, "inputs", reads)).edits.at(0).values.front() == "{projectRoot}/config/*");
    }
    SECTION("a sibling not read: each file stays")
    {
        w.dir.write("packages/a/config/6.json", "{}\n");
        CHECK(w.plan(report({"a:build"}, "inputs", reads)).edits.at(0).values == reads);
    }
    SECTION("four files: each file stays")
    {
        Strings four(reads.begin() + 1, reads.end());
        CHECK(w.plan(report({"a:build"}, "inputs", four)).edits.at(0).values == four);
    }
    SECTION("what a tool writes is named as it is")
    {
        Strings written(reads.begin(), reads.begin() + 5);
        CHECK(w.plan(report({"a:build"}, "outputs", written)).edits.at(0).values == written);
    }
}

TEST_CASE("report fix plan: files going to sharedGlobals fold as well", "[cli][report_fix]")
{
    FixWorkspace w(R"({"namedInputs": {"sharedGlobals": [], "default": ["{projectRoot}/**/*", "sharedGlobals"]}})");
    Strings reads;
    for (const char* f : {"a", "b", "c", "d", "e"}) {
        w.dir.write(std::string("conf/") + f + ".yaml", "x: 1\n");
        reads.push_back(std::string("{workspaceRoot}/conf/") + f + ".yaml");
    }
    for (const char* p : {"a", "b", "c"})
        w.project(p, R"({"build": {"command": "true"}, "lint": {"command": "true"}})");
    FixPlan plan = w.plan(report({"a:build", "b:lint", "c:build"}, "inputs", reads));
    CHECK(described(plan) == Strings{"nx.json namedInputs.sharedGlobals: | {workspaceRoot}/conf/*"});
}

TEST_CASE("report fix plan: a git-ignored file another target outputs is that task in dependsOn, not an input",
          "[cli][report_fix]")
{
    // knip (the root project) reads the store's build output: an input would key nothing (issue 39).
    FixWorkspace w(R"({"targetDefaults": {"build": {"outputs": ["{projectRoot}/dist"]}}})");
    w.dir.write(".gitignore", "dist\n");
    w.project("store", R"({"build": {"command": "true"}})");
    w.dir.write("packages/store/dist/index.js", "export {}\n");
    w.dir.write("project.json", R"({"name": "root", "targets": {"knip": {"command": "true", "dependsOn": ["^x"]}}})");
    w.dir.write("notes.txt", "notes\n");
    const Strings reads{"{projectRoot}/packages/store/dist/index.js", "{projectRoot}/notes.txt"};
    FixPlan plan = w.plan(report({"root:knip"}, "inputs", reads));
    CHECK(described(plan) == Strings{
                                 R"(project.json targets.knip.dependsOn: "^x" | {"projects": ["store"], "target": "build"})",
                                 R"(project.json targets.knip.inputs: "default" "^default" | {projectRoot}/notes.txt)",
                             });
    REQUIRE(plan.edits.at(0).json);
    CHECK(plan.by_hand.empty());

    // Once it depends on the store's build, nothing is left to plan for the file.
    w.dir.write("project.json", R"({"name": "root", "targets": {"knip": {"command": "true", "inputs": ["default",
        "{projectRoot}/notes.txt"], "dependsOn": [{"projects": ["store"], "target": "build"}]}}})");
    CHECK(described(w.plan(report({"root:knip"}, "inputs", reads))).empty());

    // Ignored, and no target outputs it: said, not written as an input that keys nothing.
    w.dir.write(".gitignore", "dist\ngen\n");
    w.dir.write("gen/types.d.ts", "export {}\n");
    plan = w.plan(report({"root:knip"}, "inputs", {"{projectRoot}/gen/types.d.ts"}));
    CHECK(plan.edits.empty());
    REQUIRE(plan.by_hand.size() == 1);
    CHECK(plan.by_hand[0].find("gen/types.d.ts is git-ignored") != std::string::npos);
}

TEST_CASE("report fix plan: what a tool scanning the workspace reads goes into ignoreReads, as the summary says",
          "[cli][report_fix]")
{
    FixWorkspace w(R"({"namedInputs": {"sharedGlobals": [], "default": ["{projectRoot}/**/*", "sharedGlobals"]},
  "targetDefaults": {"test": {"cache": true}}})");
    for (const char* p : {"a", "b", "c"})
        w.project(p, kCommand);
    qk::audit::RunAudit r;
    for (const char* t : {"a:test", "b:test", "c:test"}) {
        qk::audit::TaskAudit task;
        task.task = t;
        const Strings globs{"{workspaceRoot}/examples/*/atoms/tsconfig.json", "{workspaceRoot}/examples/*/simple/tsconfig.json"};
        task.given_suggestions = std::vector<qk::audit::Suggestion>{
            {"tsconfigReads", "inputs", globs, globs, 13, "vite-tsconfig-paths finds paths", {}}};
        r.tasks.push_back(std::move(task));
    }
    // Not 13 entries in sharedGlobals, keying every task on every example: one ignoreReads glob (issue 39).
    CHECK(described(w.plan(r)) ==
          Strings{"nx.json targetDefaults.test.qk:ultracache.ignoreReads: | {workspaceRoot}/examples/*/*/tsconfig.json"});
    // Declared so, nothing is left.
    FixWorkspace done(R"({"targetDefaults": {"test": {"qk:ultracache": {"ignoreReads":
        ["{workspaceRoot}/examples/*/*/tsconfig.json"]}}}})");
    for (const char* p : {"a", "b", "c"})
        done.project(p, kCommand);
    CHECK(described(done.plan(r)).empty());
}

TEST_CASE("report fix plan: installed packages read through hoisting are said once each, with why and where",
          "[cli][report_fix]")
{
    FixWorkspace w("{}");
    w.project("a", kCommand);
    w.project("b", kCommand);
    qk::audit::RunAudit r = report({"a:test", "b:test"}, "packageExtensions", {"@types/babel__core", "events"});
    FixPlan plan = w.plan(r);
    CHECK(plan.edits.empty());
    REQUIRE(plan.by_hand.size() == 2);
    // tsc loads @types with no import: "the package importing it" does not exist.
    CHECK(plan.by_hand[0].starts_with("@types/babel__core (2): tsc loads every package in node_modules/@types"));
    CHECK(plan.by_hand[1].starts_with("events (2): read through pnpm's hoisting"));
    CHECK(plan.by_hand[1].find("pnpm-workspace.yaml's packageExtensions") != std::string::npos);
    // pnpm 9 reads them from the root package.json.
    w.dir.write("package.json", R"({"name": "root", "private": true, "packageManager": "pnpm@9.15.0"})");
    CHECK(w.plan(r).by_hand.at(1).find("package.json's pnpm.packageExtensions (pnpm 9)") != std::string::npos);
}

TEST_CASE("report fix plan: hosts reached outside a declared network go into the target's list", "[cli][report_fix]")
{
    FixWorkspace w(R"({"targetDefaults": {"fetch": {"qk:sandbox": {"network": ["ok.test"]}}}})");
    w.project("a", R"({"fetch": {"command": "true", "qk:sandbox": {"network": false}}})");
    w.project("b", R"({"fetch": {"command": "true"}})");  // takes the targetDefaults list
    w.project("c", R"({"fetch": {"command": "true", "qk:sandbox": {"network": ["*.test:443"]}}})");
    qk::audit::RunAudit r;
    for (const char* t : {"a:fetch", "b:fetch", "c:fetch"}) {
        qk::audit::TaskAudit task;
        task.task = t;
        task.given_suggestions = std::vector<qk::audit::Suggestion>{
            {"undeclaredNetwork", "network", {"evil.test:443", "192.0.2.1:9"}, {}, 2, {}, {}}};
        r.tasks.push_back(std::move(task));
    }
    FixPlan plan = w.plan(r);
    // false becomes the list (report_fix.cpp replaces it); a list taken from targetDefaults is written first;
    // what a list allows already (evil.test:443 by *.test:443) is left out.
    CHECK(described(plan) == Strings{
                                 "packages/a/project.json targets.fetch.qk:sandbox.network: | evil.test:443 192.0.2.1:9",
                                 "packages/b/project.json targets.fetch.qk:sandbox.network: \"ok.test\" | evil.test:443 "
                                 "192.0.2.1:9",
                                 "packages/c/project.json targets.fetch.qk:sandbox.network: \"*.test:443\" | 192.0.2.1:9",
                             });
    CHECK(plan.by_hand.empty());
}

TEST_CASE("report fix plan: asked, a target that declares no network is given the hosts it reached; one that "
          "declares true or a list is left as it is", "[cli][report_fix]")
{
    FixWorkspace w("{}");
    w.project("a", R"({"fetch": {"command": "true"}})");
    w.project("b", R"({"fetch": {"command": "true", "qk:sandbox": {"network": true}}})");
    w.project("c", R"({"fetch": {"command": "true", "qk:sandbox": {"network": ["ok.test"]}}})");
    qk::audit::RunAudit r;
    for (const char* t : {"a:fetch", "b:fetch", "c:fetch"}) {
        qk::audit::TaskAudit task;
        task.task = t;
        task.findings.network = {"ok.test:443", "registry.npmjs.org:443"};
        task.findings.loopback_network = {"127.0.0.1:5432"};
        r.tasks.push_back(std::move(task));
    }
    CHECK(w.plan(r).edits.empty());  // not asked: the spec keeps the network open
    FixPlan plan = w.plan(r, true);
    CHECK(described(plan) ==
          Strings{"packages/a/project.json targets.fetch.qk:sandbox.network: | ok.test:443 registry.npmjs.org:443"});
    CHECK(plan.by_hand.empty());
}
