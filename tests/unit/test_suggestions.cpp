// Suggestions a user can follow (issue 24): names made for one run are never suggested, what a task wrote
// and reads back is an output, files held by effect are declared and never ignored, sibling files are one
// glob, and what many tasks read is one change in nx.json.
#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <algorithm>

#include "qk/audit/suggestions.hpp"

using namespace qk::audit;
using Paths = std::vector<std::string>;

namespace {

TaskAudit audited(std::string id, TaskFindings findings, std::string project_root = "")
{
    TaskAudit t{std::move(id), TaskStatus::audited, "", std::move(findings)};
    t.project_root = std::move(project_root);
    return t;
}

// Every value any suggestion of `declare` gives.
Paths declared(const std::vector<Suggestion>& suggestions, const std::string& declare)
{
    Paths out;
    for (const Suggestion& s : suggestions)
        if (s.declare == declare)
            out.insert(out.end(), s.values.begin(), s.values.end());
    return out;
}

bool mentions(const std::vector<Suggestion>& suggestions, const std::string& needle)
{
    for (const Suggestion& s : suggestions)
        for (const auto* list : {&s.values, &s.or_ignore})
            for (const std::string& v : *list)
                if (v.find(needle) != std::string::npos)
                    return true;
    return false;
}

}  // namespace

TEST_CASE("names made for one run are told apart from names people keep", "[audit][suggestions]")
{
    for (const char* p : {"packages/app/vite.config.ts.timestamp-1796405520738-3f2a1b.mjs",
                          "app/vite.config.mts.timestamp-1.mjs", "packages/app/package.json.tmp-3f2a1b",
                          "out/index.3f2a9c1b.js", ".cache/eslint-1796405520738.json",
                          "tmp/0b6a3c2e-9f1d-4c8e-a7b5-1e2d3c4b5a69/x.json", ".cache/3f2a1b9c0d/state.json",
                          "dist/app.tmp.8c1f"})
        CHECK(temporary_name(p));
    for (const char* p : {"tsconfig.base.json", "packages/app/tsconfig.app.json", "pnpm-lock.yaml", ".npmrc",
                          "packages/lib0123/src/index.ts", "logs/20240101.log", "assets/deadbeef.png",
                          "e2e/app.spec.ts", "packages/v8/sha256.js", "src/timestamp-utils.ts", "tmp/notes.txt"})
        CHECK_FALSE(temporary_name(p));
}

TEST_CASE("a name made for one run is never suggested, as an input or an output", "[audit][suggestions]")
{
    TaskFindings f;
    // strace cannot see a creation without O_EXCL: vite's timestamped config stays a stray write there,
    // and a read of one left by another process is a read outside the inputs.
    f.reads_outside_inputs = {".cache/eslint-1796405520738-3f2a1b.json", "packages/app/made.mjs", "scripts/stamp.mjs"};
    f.stray_writes = {"packages/app/vite.config.ts.timestamp-1796405520738-3f2a1b.mjs", "packages/app/build.log"};
    f.temporary_files = {"packages/app/made.mjs"};
    auto s = suggest(audited("app:build", f, "packages/app"));
    CHECK(declared(s, "inputs") == Paths{"{workspaceRoot}/scripts/stamp.mjs"});
    CHECK(declared(s, "outputs") == Paths{"{projectRoot}/build.log"});
    CHECK_FALSE(mentions(s, "timestamp"));
    CHECK_FALSE(mentions(s, "1796405520738"));
    CHECK_FALSE(mentions(s, "made.mjs"));
}

TEST_CASE("a build reading back the dist it wrote is told to declare dist as an output, never an input",
          "[audit][suggestions]")
{
    // The build made packages/lib/dist and wrote dist/cjs/index.cjs under a temporary name it renamed into
    // place, then read it: the recorder saw the read under the final name apart from the write.
    TaskFindings f;
    f.stray_writes = {"packages/lib/dist", "packages/lib/dist/cjs", "packages/lib/dist/cjs/index.cjs"};
    f.created_directories = {"packages/lib/dist", "packages/lib/dist/cjs"};
    f.reads_outside_inputs = {"packages/lib/dist/cjs/index.cjs", "packages/lib/dist/esm/index.js"};
    f.tsconfig_reads = {"packages/lib/dist/tsconfig.tsbuildinfo.json"};
    TaskAudit t = audited("lib:build", f, "packages/lib");

    auto s = suggest(t);  // as the report gives it, findings as they came
    CHECK(declared(s, "outputs") == Paths{"{projectRoot}/dist"});
    CHECK(declared(s, "inputs").empty());
    CHECK_FALSE(mentions(s, "index.cjs"));

    // Normalised (as every run's findings are), the read is no finding at all: one write, listed once.
    t.findings.normalise();
    CHECK(t.findings.reads_outside_inputs.empty());
    CHECK(t.findings.tsconfig_reads.empty());
    CHECK(t.findings.stray_writes == Paths{"packages/lib/dist", "packages/lib/dist/cjs", "packages/lib/dist/cjs/index.cjs"});
    CHECK(declared(suggest(t), "outputs") == Paths{"{projectRoot}/dist"});
}

TEST_CASE("a file held by effect is declared to be read, never ignored", "[audit][suggestions]")
{
    CHECK(held_by_effect("pnpm-workspace.yaml", "packages/app"));
    CHECK(held_by_effect("nx.json", "packages/app"));
    CHECK(held_by_effect("package.json", "packages/app"));
    CHECK_FALSE(held_by_effect("package.json", "."));  // the root project's own manifest is keyed whole
    CHECK(held_by_effect("packages/app/project.json", "packages/app"));
    CHECK_FALSE(held_by_effect("packages/other/project.json", "packages/app"));
    CHECK_FALSE(held_by_effect(".npmrc", "packages/app"));

    TaskFindings f;
    f.reads_outside_inputs = {"pnpm-workspace.yaml", "scripts/stamp.mjs"};
    auto s = suggest(audited("app:build", f, "packages/app"));
    REQUIRE(s.size() == 1);
    CHECK(s[0].values == Paths{"{workspaceRoot}/pnpm-workspace.yaml", "{workspaceRoot}/scripts/stamp.mjs"});
    CHECK(s[0].or_ignore == Paths{"{workspaceRoot}/scripts/stamp.mjs"});
    CHECK(suggestion_line(s[0]) == "\"inputs\": [\"{workspaceRoot}/pnpm-workspace.yaml\", "
                                   "\"{workspaceRoot}/scripts/stamp.mjs\"], or [\"{workspaceRoot}/scripts/stamp.mjs\"] "
                                   "in qk:ultracache.ignoreReads if they cannot change the result");

    TaskFindings only;
    only.reads_outside_inputs = {"pnpm-workspace.yaml"};
    auto one = suggest(audited("app:build", only, "packages/app"));
    REQUIRE(one.size() == 1);
    CHECK(suggestion_line(one[0]) == "\"inputs\": [\"{workspaceRoot}/pnpm-workspace.yaml\"]");
}

TEST_CASE("a toolchain file is suggested as an input, as the version it picks may matter", "[audit][suggestions]")
{
    TaskFindings f;
    f.toolchain_reads = {".npmrc"};
    auto s = suggest(audited("app:build", f, "packages/app"));
    REQUIRE(s.size() == 1);
    CHECK(s[0].finding == "toolchainReads");
    CHECK(s[0].values == Paths{"{workspaceRoot}/.npmrc"});
    CHECK(s[0].or_ignore == s[0].values);
}

TEST_CASE("the same file read in many sibling directories is one glob", "[audit][suggestions]")
{
    auto groups = fold_siblings({"apps/web/tsconfig.json", "other/a.txt", "other/b.txt", "other/c.txt",
                                 "packages/a/tsconfig.json", "packages/b/tsconfig.json", "packages/c/tsconfig.json",
                                 "packages/d/src/tsconfig.json"});
    std::vector<std::pair<std::string, std::size_t>> seen;
    for (const auto& g : groups)
        seen.emplace_back(g.glob, g.files.size());
    // Files beside each other stay themselves: a glob stars a directory, never a name.
    CHECK(seen == std::vector<std::pair<std::string, std::size_t>>{{"apps/web/tsconfig.json", 1},
                                                                   {"other/a.txt", 1},
                                                                   {"other/b.txt", 1},
                                                                   {"other/c.txt", 1},
                                                                   {"packages/*/tsconfig.json", 3},
                                                                   {"packages/d/src/tsconfig.json", 1}});
    CHECK(fold_siblings({"packages/a/tsconfig.json", "packages/b/tsconfig.json"}).size() == 2);  // two are not many
    CHECK(sibling_match("packages/*/tsconfig.json", "packages/zz/tsconfig.json"));
    CHECK_FALSE(sibling_match("packages/*/tsconfig.json", "packages/a/b/tsconfig.json"));
    CHECK_FALSE(sibling_match("packages/*/tsconfig.json", "packages/tsconfig.json"));
    CHECK(sibling_match("*/x.json", "a/x.json"));
    CHECK(sibling_match("tsconfig.json", "tsconfig.json"));

    // vite-tsconfig-paths reads every tsconfig.json of the workspace: one glob, and ignoreReads likely fits.
    TaskFindings f;
    f.tsconfig_reads = {"packages/api/tsconfig.json", "packages/cli/tsconfig.json", "packages/docs/tsconfig.json",
                        "packages/lib/tsconfig.json", "tsconfig.base.json"};
    f.reads_outside_inputs = {"tools/a/run.js", "tools/b/run.js", "tools/c/run.js"};
    auto s = suggest(audited("app:test", f, "packages/app"));
    REQUIRE(s.size() == 3);
    CHECK(s[0].values == Paths{"{workspaceRoot}/tools/*/run.js"});  // a glob, but nothing says it is a scan
    CHECK(s[0].prefer_ignore.empty());
    CHECK(s[0].paths == 3);
    CHECK(s[1].values == Paths{"{workspaceRoot}/tsconfig.base.json"});
    CHECK(s[2].values == Paths{"{workspaceRoot}/packages/*/tsconfig.json"});
    CHECK(s[2].paths == 4);
    CHECK(s[2].prefer_ignore == "one tool reads the tsconfig.json of every directory there, likely only to find "
                                "paths (as vite-tsconfig-paths does)");
    CHECK(suggestion_line(s[2]) == "\"inputs\": [\"{workspaceRoot}/packages/*/tsconfig.json\"], or, likely better, in "
                                   "qk:ultracache.ignoreReads: one tool reads the tsconfig.json of every directory "
                                   "there, likely only to find paths (as vite-tsconfig-paths does)");
}

namespace {

RunAudit run_of(std::vector<TaskAudit> tasks)
{
    RunAudit run;
    run.tasks = std::move(tasks);
    run.finish();
    return run;
}

}  // namespace

TEST_CASE("what many tasks read is one change in nx.json, left out of each task's suggestions", "[audit][suggestions]")
{
    std::vector<TaskAudit> tasks;
    for (const char* p : {"api", "app", "lib", "web"}) {
        TaskFindings build;
        build.reads_outside_inputs = {"pnpm-workspace.yaml"};
        build.toolchain_reads = {".npmrc"};
        build.tsconfig_reads = {"tsconfig.base.json"};
        tasks.push_back(audited(std::string(p) + ":build", build, "packages/" + std::string(p)));
        TaskFindings test;
        test.toolchain_reads = {".npmrc"};
        for (const char* q : {"api", "app", "lib", "web"})
            if (std::string(q) != p)
                test.tsconfig_reads.push_back("packages/" + std::string(q) + "/tsconfig.json");
        if (std::string(p) == "app")
            test.reads_outside_inputs = {"scripts/own.js"};
        tasks.push_back(audited(std::string(p) + ":test", test, "packages/" + std::string(p)));
    }
    RunAudit run = run_of(tasks);

    std::vector<std::pair<std::string, std::size_t>> shared;
    for (const SharedRead& r : run.shared_reads)
        shared.emplace_back(r.path, r.task_ids.size());
    CHECK(shared == std::vector<std::pair<std::string, std::size_t>>{{".npmrc", 8},
                                                                     {"packages/*/tsconfig.json", 4},
                                                                     {"pnpm-workspace.yaml", 4},
                                                                     {"tsconfig.base.json", 4}});
    CHECK(run.shared("packages/lib/tsconfig.json"));
    CHECK_FALSE(run.shared("scripts/own.js"));

    auto nx = suggest_shared(run);
    REQUIRE(nx.size() == 2);
    CHECK(nx[0].named_input == "sharedGlobals");
    CHECK(nx[0].values == Paths{"{workspaceRoot}/.npmrc", "{workspaceRoot}/pnpm-workspace.yaml",
                                "{workspaceRoot}/tsconfig.base.json"});
    CHECK(nx[0].or_ignore == Paths{"{workspaceRoot}/.npmrc", "{workspaceRoot}/tsconfig.base.json"});
    CHECK(nx[0].tasks == 8);
    CHECK(nx[0].targets == Paths{"build", "test"});
    CHECK(nx[1].values == Paths{"{workspaceRoot}/packages/*/tsconfig.json"});
    CHECK_FALSE(nx[1].prefer_ignore.empty());
    CHECK(nx[1].targets == Paths{"test"});
    CHECK(nx[1].tasks == 4);

    // Each task's own suggestions leave them out with the run, and keep them without (the report's).
    const TaskAudit& app_test = run.tasks[3];
    REQUIRE(app_test.task == "app:test");
    CHECK(declared(suggest(app_test, &run), "inputs") == Paths{"{workspaceRoot}/scripts/own.js"});
    CHECK(suggest(run.tasks[0], &run).empty());  // api:build read only what many read
    CHECK(mentions(suggest(run.tasks[0]), "pnpm-workspace.yaml"));
}

TEST_CASE("a file each task reads in its own directory is its own, not shared; nor is a name made for one run",
          "[audit][suggestions]")
{
    std::vector<TaskAudit> tasks;
    for (int i = 0; i < 16; ++i) {
        TaskFindings f;
        f.reads_outside_inputs = {"p" + std::to_string(i) + "/own.txt", ".cache/lint-1796405520738-3f2a1b.json"};
        tasks.push_back(audited("p" + std::to_string(i) + ":build", f));
    }
    RunAudit run = run_of(tasks);
    REQUIRE(run.read_by_many.size() == 1);  // the report still says what many read
    CHECK(run.read_by_many[0].path == ".cache/lint-1796405520738-3f2a1b.json");
    CHECK(run.shared_reads.empty());
    CHECK(suggest_shared(run).empty());
    CHECK(declared(suggest(run.tasks[0], &run), "inputs") == Paths{"{workspaceRoot}/p0/own.txt"});
}

TEST_CASE("a version manager's file at the root is shared by one task, one deeper only when many read it",
          "[audit][suggestions]")
{
    TaskFindings a, b;
    a.toolchain_reads = {".nvmrc", "packages/app/.npmrc"};
    b.reads_outside_inputs = {"x.txt"};
    RunAudit run = run_of({audited("app:build", a, "packages/app"), audited("lib:build", b, "packages/lib")});
    REQUIRE(run.shared_reads.size() == 1);
    CHECK(run.shared_reads[0].path == ".nvmrc");
    CHECK(run.shared_reads[0].toolchain);
    CHECK(declared(suggest(run.tasks[0], &run), "inputs") == Paths{"{projectRoot}/.npmrc"});
}

TEST_CASE("under enforce: a refused read of what the task wrote asks for that output; a missing file output "
          "refused under Landlock alone asks for its directory",
          "[audit][suggestions]")
{
    // vitest --coverage: coverage/.tmp/coverage-0.json written (not kept: coverage is no output), then
    // read back, refused.
    TaskAudit test{"app:test", TaskStatus::enforced, "", {}};
    test.project_root = "packages/app";
    test.findings.refused_reads = {"packages/app/coverage/.tmp/coverage-0.json", "scripts/setup.js"};
    test.findings.discarded_writes = {"packages/app/coverage"};
    auto s = suggest(test);
    CHECK(declared(s, "outputs") == Paths{"{projectRoot}/coverage"});
    CHECK(declared(s, "inputs") == Paths{"{workspaceRoot}/scripts/setup.js"});
    CHECK_FALSE(mentions(s, "coverage-0.json"));

    TaskAudit build{"lib:build", TaskStatus::enforced, "", {}};
    build.project_root = "packages/lib";
    build.file_outputs = {"packages/lib/dist/index.js"};
    build.findings.refused_writes = {"packages/lib/dist/index.js", "packages/lib/build.log"};
    auto b = suggest(build);
    REQUIRE(b.size() == 2);
    CHECK(b[0].finding == "refusedWrites");
    CHECK(b[0].values == Paths{"{projectRoot}/dist"});
    CHECK(b[0].in_place_of == Paths{"{projectRoot}/dist/index.js"});
    CHECK(suggestion_line(b[0]) == "\"outputs\": [\"{projectRoot}/dist\"] in place of [\"{projectRoot}/dist/index.js\"]");
    CHECK(b[1].values == Paths{"{projectRoot}/build.log"});
    CHECK(b[1].in_place_of.empty());
}

TEST_CASE("workspace packages' package.json read through pnpm run are one glob for the run, ignoreReads first",
          "[audit][suggestions]")
{
    // pnpm run in two packages reads every workspace package's manifest; publint's pnpm pack one more.
    TaskFindings build, lint;
    build.manifest_reads = {"packages/a/package.json", "packages/b/package.json", "packages/c/package.json"};
    lint.manifest_reads = {"packages/b/package.json", "packages/c/package.json", "tools/x/package.json"};
    RunAudit run = run_of({audited("a:build", build, "packages/a"), audited("a:lint", lint, "packages/a")});

    std::vector<std::pair<std::string, std::size_t>> shared;
    for (const SharedRead& r : run.shared_reads)
        if (r.manifest)
            shared.emplace_back(r.path, r.task_ids.size());
    // tools/x/package.json, read by one task alone (resolving a package), stays that task's own.
    CHECK(shared == std::vector<std::pair<std::string, std::size_t>>{{"packages/*/package.json", 2}});
    auto nx = suggest_shared(run);
    REQUIRE(nx.size() == 1);
    CHECK(nx[0].values == Paths{"{workspaceRoot}/packages/*/package.json"});
    CHECK_FALSE(nx[0].prefer_ignore.empty());
    CHECK(nx[0].targets == Paths{"build", "lint"});

    // Said once for the run, so not for each task; the report's own suggestions still hold them.
    CHECK(suggest(run.tasks[0], &run).empty());
    CHECK(declared(suggest(run.tasks[1], &run), "inputs") == Paths{"{workspaceRoot}/tools/x/package.json"});

    // A dependency's manifest, read with more of its files, is keyed by the ^default suggested for them.
    TaskAudit test = audited("app:test", {}, "packages/app");
    test.findings.manifest_reads = {"packages/lib/package.json"};
    test.findings.dependency_reads = {{"lib", {"packages/lib/src/a.ts"}}};
    test.dependency_roots = {{"lib", "packages/lib"}};
    CHECK(declared(suggest(test), "inputs") == Paths{"^default"});
    CHECK(declared(suggest(run.tasks[1]), "inputs") == Paths{"{workspaceRoot}/packages/b/package.json",
                                                             "{workspaceRoot}/packages/c/package.json",
                                                             "{workspaceRoot}/tools/x/package.json"});
}

TEST_CASE("workspace manifests two directories deep are one glob, and every manifest glob one nx.json change",
          "[audit][suggestions]")
{
    // TanStack/store: packages/* and examples/*/*, the examples named alike in each framework's directory.
    // Folded one directory at a time they were five globs (examples/*/atoms/..., examples/*/simple/...),
    // each said as its own nx.json change.
    Paths all = {"packages/lit-store/package.json", "packages/react-store/package.json",
                 "packages/store/package.json"};
    for (const char* framework : {"angular", "react", "vue"})
        for (const char* example : {"atoms", "simple", "stores"})
            all.push_back(fmt::format("examples/{}/{}/package.json", framework, example));
    std::sort(all.begin(), all.end());
    TaskFindings test, types;
    test.manifest_reads = all;
    types.manifest_reads = all;
    RunAudit run = run_of({audited("store:test:lib", test, "packages/store"),
                           audited("react-store:test:types", types, "packages/react-store")});
    std::vector<std::pair<std::string, std::size_t>> shared;
    for (const SharedRead& r : run.shared_reads)
        shared.emplace_back(r.path, r.files);
    CHECK(shared == std::vector<std::pair<std::string, std::size_t>>{{"examples/*/*/package.json", 9},
                                                                     {"packages/*/package.json", 3}});
    auto nx = suggest_shared(run);
    REQUIRE(nx.size() == 1);
    CHECK(nx[0].values ==
          Paths{"{workspaceRoot}/examples/*/*/package.json", "{workspaceRoot}/packages/*/package.json"});
    CHECK(nx[0].targets == Paths{"test:lib", "test:types"});
    CHECK(nx[0].tasks == 2);
    CHECK(suggest(run.tasks[0], &run).empty());

    CHECK(sibling_match("examples/*/*/package.json", "examples/vue/atoms/package.json"));
    CHECK_FALSE(sibling_match("examples/*/*/package.json", "examples/vue/package.json"));
    CHECK_FALSE(sibling_match("examples/*/*/package.json", "examples/vue/a/b/package.json"));
    CHECK_FALSE(sibling_match("examples/*/*/package.json", "examples//a/package.json"));
    // Globs that share no shape stay apart: nothing folds into "*/*/...".
    auto groups = fold_siblings_deep({"a/x/package.json", "a/y/package.json", "b/c/d/tsconfig.json"}, 2);
    REQUIRE(groups.size() == 2);
    CHECK(groups[0].glob == "a/*/package.json");
    CHECK(groups[1].glob == "b/c/d/tsconfig.json");
}

TEST_CASE("under Landlock alone, a refused change of a declared output directory itself asks for nothing",
          "[audit][suggestions]")
{
    TaskAudit test{"app:test", TaskStatus::enforced, "", {}};
    test.project_root = "packages/app";
    test.output_paths = {"packages/app/coverage", "packages/app/dist/esm", "packages/app/report.json"};
    test.file_outputs = {"packages/app/report.json"};
    CHECK(output_itself(test, "packages/app/coverage"));
    CHECK(output_itself(test, "packages/app/dist"));  // holds dist/esm: a tool clearing dist
    CHECK_FALSE(output_itself(test, "packages/app/coverage/x.json"));
    CHECK_FALSE(output_itself(test, "packages/app/cov"));
    CHECK_FALSE(output_itself(test, "packages/app/report.json"));  // a file output: its directory instead
    test.findings.refused_writes = {"packages/app/coverage", "packages/app/dist", "packages/app/stray.txt",
                                    ".qk/cache/forged"};  // read-only to every task: nothing to declare
    CHECK(declared(suggest(test), "outputs") == Paths{"{projectRoot}/stray.txt"});
}
