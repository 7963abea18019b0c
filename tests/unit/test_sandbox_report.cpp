// The sandbox summary, line by line against the spec's wording, and the --sandbox-report document,
// parsed and compared as a structure.
#include <simdjson.h>

#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <variant>

#include "qk/util/json_writer.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/report/sandbox_summary.hpp"
#include "qk/audit/suggestions.hpp"

using namespace qk::audit;
using qk::report::sandbox_report_json;
using qk::report::sandbox_summary;
using Paths = std::vector<std::string>;

namespace {

TaskAudit audited(std::string id, TaskFindings findings = {})
{
    return {std::move(id), TaskStatus::audited, "", std::move(findings)};
}

TaskAudit other(std::string id, TaskStatus status, std::string reason = "")
{
    return {std::move(id), status, std::move(reason), {}};
}

TaskFindings reads(Paths paths)
{
    TaskFindings f;
    f.reads_outside_inputs = std::move(paths);
    return f;
}

std::string summary_of(std::vector<TaskAudit> tasks, std::string no_recorder = "")
{
    RunAudit run;
    run.tasks = std::move(tasks);
    run.no_recorder = std::move(no_recorder);
    run.finish();
    return sandbox_summary(run);
}

bool has_line(const std::string& text, const std::string& line)
{
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// A parsed JSON document as plain values, so that a document compares by structure: objects by
// their members whatever their order, numbers by value, not by how they were spelled.
struct Json {
    std::variant<std::nullptr_t, bool, std::int64_t, std::string, std::vector<Json>, std::map<std::string, Json>> v;
    bool operator==(const Json&) const = default;
};

Json from_dom(simdjson::dom::element e)
{
    using simdjson::dom::element_type;
    switch (e.type()) {
    case element_type::ARRAY: {
        std::vector<Json> items;
        // Bound first: value() of a temporary result is a reference into it, dangling in a range-for.
        simdjson::dom::array array = e.get_array().value();
        for (auto item : array)
            items.push_back(from_dom(item));
        return {std::move(items)};
    }
    case element_type::OBJECT: {
        std::map<std::string, Json> members;
        simdjson::dom::object object = e.get_object().value();
        for (auto [k, v] : object)
            REQUIRE(members.emplace(std::string(k), from_dom(v)).second);  // no key twice
        return {std::move(members)};
    }
    case element_type::INT64: return {e.get_int64().value()};
    case element_type::UINT64: return {static_cast<std::int64_t>(e.get_uint64().value())};
    case element_type::STRING: return {std::string(e.get_string().value())};
    case element_type::BOOL: return {e.get_bool().value()};
    case element_type::NULL_VALUE: return {nullptr};
    case element_type::DOUBLE: break;
    }
    FAIL("the report holds no fractional numbers");
    return {};
}

Json parse(const std::string& text)
{
    simdjson::dom::parser parser;
    return from_dom(parser.parse(text).value());
}

void write(qk::JsonWriter& w, const Json& j)
{
    std::visit(
        [&w](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::nullptr_t>)
                w.null();
            else if constexpr (std::is_same_v<T, std::vector<Json>>) {
                w.begin_array();
                for (const auto& item : v)
                    write(w, item);
                w.end_array();
            } else if constexpr (std::is_same_v<T, std::map<std::string, Json>>) {
                w.begin_object();
                for (const auto& [k, item] : v)
                    write(w.key(k), item);
                w.end_object();
            } else
                w.value(v);
        },
        j.v);
}

// The keys of the object at `pointer`, in the document's order.
// The report without what names its run and machine (run; each task's hash and provenance), which
// "the report names its run, and each task its hash and provenance" checks apart.
Json findings_only(const std::string& text)
{
    Json doc = parse(text);
    auto& top = std::get<std::map<std::string, Json>>(doc.v);
    REQUIRE(top.erase("run") == 1);
    for (auto& [id, task] : std::get<std::map<std::string, Json>>(top.at("tasks").v)) {
        auto& fields = std::get<std::map<std::string, Json>>(task.v);
        REQUIRE(fields.erase("provenance") == 1);
        fields.erase("hash");
    }
    return doc;
}

std::vector<std::string> keys_at(const std::string& text, const char* pointer)
{
    simdjson::dom::parser parser;
    std::vector<std::string> out;
    simdjson::dom::object object = parser.parse(text).at_pointer(pointer).get_object().value();
    for (auto [k, v] : object)
        out.emplace_back(k);
    return out;
}

}  // namespace

namespace Catch {
template <>
struct StringMaker<Json> {
    static std::string convert(const Json& j)
    {
        qk::JsonWriter w(0);
        write(w, j);
        return w.str();
    }
};
}  // namespace Catch

TEST_CASE("the spec's example comes out, with what to declare after what the task did", "[report][sandbox-report]")
{
    TaskFindings build;
    build.reads_outside_inputs = {"other/notes.txt"};
    build.stray_writes = {"stray.txt"};
    build.unkeyed_reads = {".env"};
    CHECK(summary_of({audited("app:clean"), audited("app:build", build)}) ==
          "Sandbox audit: 1 of 2 tasks went beyond what they declare\n"
          "  app:build\n"
          "    1 read outside its inputs:\n"
          "      other/notes.txt\n"
          "    1 written outside its outputs:\n"
          "      stray.txt\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/other/notes.txt\"], or in qk:ultracache.ignoreReads if it cannot change the result\n"
          "      \"outputs\": [\"{workspaceRoot}/stray.txt\"]\n"
          "  read, which the sandbox allows, but not in their keys: .env (1 task: app:build)\n");
}

TEST_CASE("the header says how many tasks went beyond, in the right number", "[report][sandbox-report]")
{
    CHECK(summary_of({audited("a:build"), audited("b:build"), audited("c:build")}) ==
          "Sandbox audit: 3 tasks kept to what they declare\n");
    CHECK(summary_of({audited("a:build")}) == "Sandbox audit: 1 task kept to what it declares\n");
    CHECK(summary_of({audited("a:build", reads({"x"}))}).starts_with(
        "Sandbox audit: 1 of 1 task went beyond what it declares\n"));
    CHECK(summary_of({audited("a:build", reads({"x"})), audited("b:build", reads({"y"})), audited("c:build")})
              .starts_with("Sandbox audit: 2 of 3 tasks went beyond what they declare\n"));
}

TEST_CASE("with nothing audited the header says so, and why when no recorder works", "[report][sandbox-report]")
{
    CHECK(summary_of({other("a:build", TaskStatus::restored)}) ==
          "Sandbox audit: no task was audited\n"
          "  1 task restored from the cache, so not audited: a:build\n");
    CHECK(summary_of({other("a:build", TaskStatus::not_audited, "no recorder works here"),
                      other("b:build", TaskStatus::not_audited, "no recorder works here")},
                     "strace is not installed and eBPF needs CAP_BPF") ==
          "Sandbox audit: no task was audited: strace is not installed and eBPF needs CAP_BPF\n");
    // Without the recorder's reason, the tasks' own reasons are all there is.
    CHECK(summary_of({other("a:build", TaskStatus::not_audited, "the recording lost 3 events")}) ==
          "Sandbox audit: no task was audited\n"
          "  1 task not audited:\n"
          "    a:build: the recording lost 3 events\n");
    CHECK(summary_of({}) == "Sandbox audit: no task was audited\n");
}

TEST_CASE("manifest and toolchain reads are counted once at the top", "[report][sandbox-report]")
{
    TaskFindings one, two;
    one.manifest_reads = {"lib/package.json"};
    one.toolchain_reads = {".npmrc", ".nvmrc"};
    two.manifest_reads = {"lib/package.json", "util/package.json"};
    two.toolchain_reads = {".npmrc"};
    std::string both = summary_of({audited("a:build", one), audited("b:build", two), audited("c:build")});
    // Toolchain files at the workspace root are every task's: declared once, in nx.json. A task that went
    // beyond only by what is counted at the top is one name on one line, not a block of its own.
    CHECK(both ==
          "Sandbox audit: 2 of 3 tasks went beyond what they declare\n"
          "  2 workspace packages' package.json read by 2 tasks: a:build, b:build\n"
          "  version and package managers' configuration read: .npmrc (2 tasks: a:build, b:build), .nvmrc (1 task: "
          "a:build)\n"
          "  what to declare once, in nx.json, rather than in each target:\n"
          "    \"namedInputs\": {\"sharedGlobals\": [\"{workspaceRoot}/.npmrc\", \"{workspaceRoot}/.nvmrc\"]}\n"
          "      with \"sharedGlobals\" in \"default\" (\"default\": [\"{projectRoot}/**/*\", \"sharedGlobals\"]), and in "
          "the inputs of targets that name theirs without it\n"
          "      what cannot change the results may go in qk:ultracache.ignoreReads (in targetDefaults) instead\n"
          "    \"targetDefaults\": {\"build\": {\"qk:ultracache\": {\"ignoreReads\": [\"{workspaceRoot}/*/package.json\"]}}}\n"
          "      package managers read the package.json of every workspace package to list the workspace, as pnpm run "
          "does; if it can change the results, add it to \"sharedGlobals\" instead\n"
          "  2 tasks went beyond only by what is counted above: a:build, b:build\n");
    CHECK(both.find("only reads counted above") == std::string::npos);

    TaskFindings single;
    single.manifest_reads = {"lib/package.json"};
    CHECK(has_line(summary_of({audited("a:build", single)}),
                   "  1 workspace package's package.json read by 1 task: a:build"));
}

TEST_CASE("paths read by many tasks are listed at the top and not again per task", "[report][sandbox-report]")
{
    TaskFindings a = reads({"a/own.txt", "tools/x.js"});
    TaskFindings b;
    b.tsconfig_reads = {"tools/x.js"};
    TaskFindings c = reads({"tools/x.js"});
    CHECK(summary_of({audited("a:build", a), audited("b:build", b), audited("c:build", c)}) ==
          "Sandbox audit: 3 of 3 tasks went beyond what they declare\n"
          "  read by many tasks:\n"
          "    tools/x.js (3 tasks: a:build, b:build, c:build): TypeScript configuration, likely an input\n"
          "  what to declare once, in nx.json, rather than in each target:\n"
          "    \"namedInputs\": {\"sharedGlobals\": [\"{workspaceRoot}/tools/x.js\"]}\n"
          "      with \"sharedGlobals\" in \"default\" (\"default\": [\"{projectRoot}/**/*\", \"sharedGlobals\"]), and in "
          "the inputs of targets that name theirs without it\n"
          "      what cannot change the results may go in qk:ultracache.ignoreReads (in targetDefaults) instead\n"
          "  a:build\n"
          "    1 read outside its inputs:\n"
          "      a/own.txt\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/a/own.txt\"], or in qk:ultracache.ignoreReads if it cannot change the result\n"
          "    and 1 file many tasks read: in nx.json, above\n"
          "  2 tasks went beyond only by what is counted above: b:build, c:build\n");

    // Two tasks are not many: each lists the path itself.
    std::string pair =
        summary_of({audited("a:build", reads({"tools/x.js"})), audited("b:build", reads({"tools/x.js"}))});
    CHECK(pair.find("read by many") == std::string::npos);
    CHECK(pair ==
          "Sandbox audit: 2 of 2 tasks went beyond what they declare\n"
          "  a:build\n"
          "    1 read outside its inputs:\n"
          "      tools/x.js\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/tools/x.js\"], or in qk:ultracache.ignoreReads if it cannot change the result\n"
          "  b:build\n"
          "    1 read outside its inputs:\n"
          "      tools/x.js\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/tools/x.js\"], or in qk:ultracache.ignoreReads if it cannot change the result\n");
}

TEST_CASE("three tasks of sixteen that went beyond are not many", "[report][sandbox-report]")
{
    std::vector<TaskAudit> tasks;
    for (int i = 0; i < 16; ++i) {
        std::string project = "p" + std::to_string(i);
        tasks.push_back(audited(project + ":build", reads(i < 3 ? Paths{"tools/x.js"} : Paths{project + "/own.txt"})));
    }
    std::string text = summary_of(tasks);
    CHECK(text.starts_with("Sandbox audit: 16 of 16 tasks went beyond what they declare\n"));
    CHECK(text.find("read by many") == std::string::npos);
    CHECK(text.find("  p0:build\n    1 read outside its inputs:\n      tools/x.js\n") != std::string::npos);
}

TEST_CASE("each task lists its reads, TypeScript configurations, writes and dependencies' files",
          "[report][sandbox-report]")
{
    TaskFindings f;
    f.reads_outside_inputs = {"other/b.txt", "other/a.txt"};
    f.tsconfig_reads = {"tsconfig.base.json", "libs/tsconfig.json"};
    f.stray_writes = {"stray.txt", "out/extra.txt"};
    f.git_writes = {".git/index"};
    f.dependency_reads = {{"util", {"util/a.js"}}, {"lib", {"lib/a.js", "lib/b.js", "lib/src/c.js"}}};
    TaskAudit app = audited("app:build", f);
    app.project_root = "app";
    app.dependency_roots = {{"lib", "lib"}, {"util", "util"}};
    CHECK(summary_of({app}) ==
          "Sandbox audit: 1 of 1 task went beyond what it declares\n"
          "  app:build\n"
          "    2 reads outside its inputs:\n"
          "      other/a.txt\n"
          "      other/b.txt\n"
          "    2 TypeScript configurations read outside its inputs, likely inputs:\n"
          "      libs/tsconfig.json\n"
          "      tsconfig.base.json\n"
          "    2 written outside its outputs:\n"
          "      out/extra.txt\n"
          "      stray.txt\n"
          "    read in projects it depends on: lib (3 files), util (1 file)\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/libs/tsconfig.json\", \"{workspaceRoot}/other/a.txt\", "
          "\"{workspaceRoot}/other/b.txt\", \"{workspaceRoot}/tsconfig.base.json\"], or in qk:ultracache.ignoreReads if they cannot change the result\n"
          "      \"outputs\": [\"{workspaceRoot}/out/extra.txt\", \"{workspaceRoot}/stray.txt\"]\n"
          "      \"inputs\": [\"^default\"], or [\"^a.js\", \"^b.js\", \"^src/**\"] in qk:ultracache.ignoreReads if they "
          "cannot change the result\n"
          "  1 task wrote in .git, which the sandbox allows: app:build\n");

    TaskFindings one;
    one.tsconfig_reads = {"tsconfig.base.json"};
    CHECK(summary_of({audited("app:build", one)}) ==
          "Sandbox audit: 1 of 1 task went beyond what it declares\n"
          "  app:build\n"
          "    1 TypeScript configuration read outside its inputs, likely an input:\n"
          "      tsconfig.base.json\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/tsconfig.base.json\"], or in qk:ultracache.ignoreReads if it cannot change the result\n");

    TaskFindings dep;
    dep.dependency_reads = {{"lib", {"lib/a.js"}}};
    TaskAudit test = audited("app:test", dep);
    test.dependency_roots = {{"lib", "lib"}};
    CHECK(summary_of({test}) ==
          "Sandbox audit: 1 of 1 task went beyond what it declares\n"
          "  app:test\n"
          "    read in projects it depends on: lib (1 file)\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"^default\"], or [\"^a.js\"] in qk:ultracache.ignoreReads if it cannot change the "
          "result\n");
}

TEST_CASE("writes in .git and unkeyed reads do not make a task go beyond", "[report][sandbox-report]")
{
    TaskFindings git;
    git.git_writes = {".git/index", "sub/.git/HEAD"};
    git.unkeyed_reads = {".git/HEAD", ".env"};
    TaskFindings also = git;
    also.unkeyed_reads = {".git/HEAD"};
    CHECK(summary_of({audited("a:build", git), audited("b:build", also)}) ==
          "Sandbox audit: 2 tasks kept to what they declare\n"
          "  read, which the sandbox allows, but not in their keys: .env (1 task: a:build), .git/HEAD (2 tasks: "
          "a:build, b:build)\n"
          "  2 tasks wrote in .git, which the sandbox allows: a:build, b:build\n");
}

TEST_CASE("temporary files do not make a task go beyond, and are listed apart when it does", "[report][sandbox-report]")
{
    TaskFindings temp;
    temp.temporary_files = {"app/vite.config.ts.timestamp-1.mjs"};
    CHECK_FALSE(temp.went_beyond());
    CHECK(summary_of({audited("a:build", temp)}) == "Sandbox audit: 1 task kept to what it declares\n");
    TaskFindings both = temp;
    both.stray_writes = {"app/build.log"};
    std::string text = summary_of({audited("a:build", both)});
    CHECK(has_line(text, "    1 written outside its outputs:"));
    CHECK(has_line(text, "    1 temporary file outside its outputs, created and removed again (not counted):"));
    CHECK(has_line(text, "      app/vite.config.ts.timestamp-1.mjs"));
}

TEST_CASE("a directory the task created is one line, and suggested whole in its project's terms",
          "[report][sandbox-report]")
{
    TaskFindings f;
    f.stray_writes = {"integrations/vue/dist", "integrations/vue/dist/cjs/a.js", "integrations/vue/dist/cjs/b.js",
                      "integrations/vue/dist/index.js", "integrations/vue/build.log"};
    f.created_directories = {"integrations/vue/dist", "integrations/vue/dist/cjs"};
    f.reads_outside_inputs = {"integrations/vue/vite.config.ts", "tsconfig.json"};
    f.hoisted_packages = {"vue"};
    TaskAudit t = audited("vue:build", f);
    t.project_root = "integrations/vue";
    std::string text = summary_of({t});
    CHECK(has_line(text, "    5 written outside its outputs:"));
    CHECK(has_line(text, "      integrations/vue/build.log"));
    CHECK(has_line(text, "      integrations/vue/dist/ (3 files, in a directory it created)"));
    CHECK(text.find("dist/cjs") == std::string::npos);

    auto s = qk::audit::suggest(t);
    REQUIRE(s.size() == 3);
    CHECK(s[0].declare == "inputs");
    CHECK(s[0].values == Paths{"{projectRoot}/vite.config.ts", "{workspaceRoot}/tsconfig.json"});
    CHECK(s[0].or_ignore == s[0].values);
    CHECK(s[1].finding == "strayWrites");
    CHECK(s[1].values == Paths{"{projectRoot}/build.log", "{projectRoot}/dist"});
    CHECK(s[1].or_ignore.empty());
    CHECK(s[2].declare == "packageExtensions");
    CHECK(s[2].values == Paths{"vue"});
    // The terminal says the same, in the target's terms, after what the task did; packages' headings say
    // theirs.
    CHECK(has_line(text, "    what to declare in its target:"));
    CHECK(has_line(text, "      \"outputs\": [\"{projectRoot}/build.log\", \"{projectRoot}/dist\"]"));
    CHECK(has_line(text, "      \"inputs\": [\"{projectRoot}/vite.config.ts\", \"{workspaceRoot}/tsconfig.json\"], "
                         "or in qk:ultracache.ignoreReads if they cannot change the result"));
    CHECK(text.find("packageExtensions") == std::string::npos);
}

TEST_CASE("files read in dependencies are keyed by ^default, or ignored by ^ globs from their roots",
          "[report][sandbox-report]")
{
    TaskFindings f;
    f.dependency_reads = {{"@acme/ui", {"libs/ui/src/a.ts", "libs/ui/src/b.ts", "libs/ui/package.json"}},
                          {"util", {"util/index.js"}}};
    TaskAudit t = audited("app:test", f);
    t.project_root = "apps/app";
    t.dependency_roots = {{"@acme/ui", "libs/ui"}, {"util", "util"}};
    auto s = qk::audit::suggest(t);
    REQUIRE(s.size() == 1);
    CHECK(s[0].finding == "dependencyReads");
    CHECK(s[0].values == Paths{"^default"});
    CHECK(s[0].or_ignore == Paths{"^index.js", "^package.json", "^src/**"});
    CHECK(qk::audit::suggestion_line(s[0]) ==
          "\"inputs\": [\"^default\"], or [\"^index.js\", \"^package.json\", \"^src/**\"] in "
          "qk:ultracache.ignoreReads if they cannot change the result");
}

TEST_CASE("a long suggestion shows its first values and how many more", "[report][sandbox-report]")
{
    qk::audit::Suggestion s{"strayWrites", "outputs", {"a", "b", "c", "d", "e", "f"}, {}, 6};
    CHECK(qk::audit::suggestion_line(s) == "\"outputs\": [\"a\", \"b\", \"c\", \"d\", \u2026 2 more]");
    qk::audit::Suggestion pkg{"unkeyedPackages", "externalDependencies", {"fallow"}, {}, 1};
    CHECK(qk::audit::suggestion_line(pkg) == "\"inputs\": [{\"externalDependencies\": [\"fallow\"]}]");
}

TEST_CASE("restored, not audited, unsandboxed and refused tasks close the summary", "[report][sandbox-report]")
{
    std::string text = summary_of({
        audited("app:build", reads({"other/notes.txt"})),
        other("app:test", TaskStatus::not_audited, "the recording lost 12 events"),
        other("lib:test", TaskStatus::not_audited, "made 100001 reports"),
        other("app:lint", TaskStatus::unsandboxed, "its inputs cannot be resolved"),
        other("lib:lint", TaskStatus::refused, "Landlock cannot take its rules"),
        other("docs:build", TaskStatus::restored),
        other("lib:build", TaskStatus::restored),
    });
    CHECK(text ==
          "Sandbox audit: 1 of 1 task went beyond what it declares\n"
          "  app:build\n"
          "    1 read outside its inputs:\n"
          "      other/notes.txt\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/other/notes.txt\"], or in qk:ultracache.ignoreReads if it cannot change the result\n"
          "  2 tasks restored from the cache, so not audited: docs:build, lib:build\n"
          "  2 tasks not audited:\n"
          "    app:test: the recording lost 12 events\n"
          "    lib:test: made 100001 reports\n"
          "  1 task ran unsandboxed:\n"
          "    app:lint: its inputs cannot be resolved\n"
          "  1 task refused:\n"
          "    lib:lint: Landlock cannot take its rules\n");

    std::string singular = summary_of({
        audited("app:build"),
        other("app:test", TaskStatus::not_audited, "lost events"),
        other("a:lint", TaskStatus::unsandboxed, "r1"),
        other("b:lint", TaskStatus::unsandboxed, "r2"),
        other("a:x", TaskStatus::refused, "r3"),
        other("b:x", TaskStatus::refused, "r4"),
        other("docs:build", TaskStatus::restored),
    });
    CHECK(singular ==
          "Sandbox audit: 1 task kept to what it declares\n"
          "  1 task restored from the cache, so not audited: docs:build\n"
          "  1 task not audited:\n"
          "    app:test: lost events\n"
          "  2 tasks ran unsandboxed:\n"
          "    a:lint: r1\n"
          "    b:lint: r2\n"
          "  2 tasks refused:\n"
          "    a:x: r3\n"
          "    b:x: r4\n");

    // Restored from a remote cache, each with the record of the machine that ran it: counted as that
    // machine saw it (findings included), and named once so a reader knows where the check was made.
    TaskAudit remote_clean = audited("lib:build");
    remote_clean.from_remote_cache = true;
    TaskAudit remote_beyond = audited("app:build", reads({"other/notes.txt"}));
    remote_beyond.from_remote_cache = true;
    std::string remote = summary_of({remote_clean, remote_beyond});
    CHECK(remote.find("Sandbox audit: 1 of 2 tasks went beyond what they declare\n  app:build\n") == 0);
    CHECK(remote.find("  2 tasks restored from the remote cache, audited where they ran: app:build, lib:build\n") !=
          std::string::npos);
    CHECK(summary_of({remote_clean}).find("  1 task restored from the remote cache, audited where it ran: lib:build\n") !=
          std::string::npos);
}

TEST_CASE("a recorder's absence is not repeated per task, unless some task was audited", "[report][sandbox-report]")
{
    // QK_RECORDER=auto found none, yet one task was audited from a replayed recording: the header
    // cannot carry the reason, so the tasks list theirs.
    std::string text = summary_of({audited("a:build"), other("b:build", TaskStatus::not_audited, "no recorder")},
                                  "strace is not installed");
    CHECK(text ==
          "Sandbox audit: 1 task kept to what it declares\n"
          "  1 task not audited:\n"
          "    b:build: no recorder\n");
}

TEST_CASE("a run with every line, in order", "[report][sandbox-report]")
{
    TaskFindings a = reads({"tools/x.js", "a/own.txt"});
    a.manifest_reads = {"lib/package.json"};
    a.toolchain_reads = {".npmrc"};
    a.unkeyed_reads = {".env"};
    a.git_writes = {".git/index"};
    TaskFindings b = reads({"tools/x.js"});
    b.toolchain_reads = {".npmrc", ".nvmrc"};
    TaskFindings c;
    c.tsconfig_reads = {"tools/x.js", "tsconfig.base.json"};
    c.stray_writes = {"c/stray.txt"};
    c.dependency_reads = {{"lib", {"lib/a.js", "lib/b.js"}}};
    std::string text = summary_of({
        audited("c:build", c),
        audited("b:build", b),
        audited("a:build", a),
        audited("d:build"),
        other("e:build", TaskStatus::restored),
        other("f:build", TaskStatus::not_audited, "lost events"),
        other("g:build", TaskStatus::unsandboxed, "unresolvable inputs"),
        other("h:build", TaskStatus::refused, "no rules"),
    });
    CHECK(text ==
          "Sandbox audit: 3 of 4 tasks went beyond what they declare\n"
          "  1 workspace package's package.json read by 1 task: a:build\n"
          "  version and package managers' configuration read: .npmrc (2 tasks: a:build, b:build), .nvmrc (1 task: "
          "b:build)\n"
          "  read by many tasks:\n"
          "    tools/x.js (3 tasks: a:build, b:build, c:build): TypeScript configuration, likely an input\n"
          "  what to declare once, in nx.json, rather than in each target:\n"
          "    \"namedInputs\": {\"sharedGlobals\": [\"{workspaceRoot}/.npmrc\", \"{workspaceRoot}/.nvmrc\", "
          "\"{workspaceRoot}/tools/x.js\"]}\n"
          "      with \"sharedGlobals\" in \"default\" (\"default\": [\"{projectRoot}/**/*\", \"sharedGlobals\"]), and in "
          "the inputs of targets that name theirs without it\n"
          "      what cannot change the results may go in qk:ultracache.ignoreReads (in targetDefaults) instead\n"
          "  a:build\n"
          "    1 read outside its inputs:\n"
          "      a/own.txt\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/a/own.txt\"], or in qk:ultracache.ignoreReads if it cannot change the result\n"
          "      \"inputs\": [\"{workspaceRoot}/lib/package.json\"], or in qk:ultracache.ignoreReads if it cannot change "
          "the result\n"
          "    and 2 files many tasks read: in nx.json, above\n"
          "  c:build\n"
          "    1 TypeScript configuration read outside its inputs, likely an input:\n"
          "      tsconfig.base.json\n"
          "    1 written outside its outputs:\n"
          "      c/stray.txt\n"
          "    read in projects it depends on: lib (2 files)\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/tsconfig.base.json\"], or in qk:ultracache.ignoreReads if it cannot change the result\n"
          "      \"outputs\": [\"{workspaceRoot}/c/stray.txt\"]\n"
          "      \"inputs\": [\"^default\"], or [\"^lib/**\"] in qk:ultracache.ignoreReads if they cannot change the "
          "result\n"
          "    and 1 file many tasks read: in nx.json, above\n"
          "  1 task went beyond only by what is counted above: b:build\n"
          "  read, which the sandbox allows, but not in their keys: .env (1 task: a:build)\n"
          "  1 task wrote in .git, which the sandbox allows: a:build\n"
          "  1 task restored from the cache, so not audited: e:build\n"
          "  1 task not audited:\n"
          "    f:build: lost events\n"
          "  1 task ran unsandboxed:\n"
          "    g:build: unresolvable inputs\n"
          "  1 task refused:\n"
          "    h:build: no rules\n");
}

namespace {

// Every status, every kind of finding, a task that kept to its declarations and a path read by many.
RunAudit every_kind_run()
{
    TaskFindings build = reads({"other/notes.txt", "tools/x.js"});
    build.tsconfig_reads = {"tsconfig.base.json"};
    build.stray_writes = {"stray.txt"};
    build.git_writes = {".git/index"};
    build.unkeyed_reads = {".env", ".git/HEAD"};
    build.manifest_reads = {"lib/package.json"};
    build.toolchain_reads = {".nvmrc"};
    build.dependency_reads = {{"lib", {"lib/src/b.ts", "lib/src/a.ts"}}, {"util", {"util/index.js"}}};
    TaskFindings git_only;
    git_only.git_writes = {".git/FETCH_HEAD"};
    git_only.tsconfig_reads = {"tools/x.js"};
    RunAudit run;
    run.recorder = "strace";
    run.tasks = {
        audited("lib:build", reads({"tools/x.js"})),
        audited("app:build", build),
        audited("app:lint", git_only),
        audited("app:clean"),
        {"docs:build", TaskStatus::restored, "", reads({"never/shown.txt"})},
        other("app:test", TaskStatus::not_audited, "the recording lost 12 events"),
        other("app:e2e", TaskStatus::unsandboxed, "its inputs cannot be resolved"),
        other("lib:lint", TaskStatus::refused, "Landlock cannot take its rules"),
    };
    run.finish();
    return run;
}

}  // namespace

TEST_CASE("the report holds every task's status and findings by kind", "[report][sandbox-report]")
{
    std::string text = sandbox_report_json(every_kind_run());
    REQUIRE(text.ends_with("}\n"));
    CHECK(text.starts_with("{\n  \"schemaVersion\": 1,\n"));  // pretty, two spaces, as other reports
    CHECK(findings_only(text) == parse(R"({
      "schemaVersion": 1,
      "mode": "audit",
      "recorder": "strace",
      "summary": {"tasks": 8, "audited": 4, "wentBeyond": 3, "restored": 1, "notAudited": 1,
                  "unsandboxed": 1, "refused": 1},
      "tasks": {
        "app:build": {"status": "audited", "findings": {
          "readsOutsideInputs": ["other/notes.txt", "tools/x.js"],
          "tsconfigReads": ["tsconfig.base.json"],
          "strayWrites": [".git/index", "stray.txt"],
          "unkeyedReads": [".env", ".git/HEAD"],
          "manifestReads": ["lib/package.json"],
          "toolchainReads": [".nvmrc"],
          "dependencyReads": {"lib": ["lib/src/a.ts", "lib/src/b.ts"], "util": ["util/index.js"]}
        }, "suggestions": [
          {"finding": "readsOutsideInputs", "declare": "inputs",
           "values": ["{workspaceRoot}/other/notes.txt", "{workspaceRoot}/tools/x.js"],
           "orIgnoreReads": ["{workspaceRoot}/other/notes.txt", "{workspaceRoot}/tools/x.js"]},
          {"finding": "tsconfigReads", "declare": "inputs", "values": ["{workspaceRoot}/tsconfig.base.json"],
           "orIgnoreReads": ["{workspaceRoot}/tsconfig.base.json"]},
          {"finding": "toolchainReads", "declare": "inputs", "values": ["{workspaceRoot}/.nvmrc"],
           "orIgnoreReads": ["{workspaceRoot}/.nvmrc"]},
          {"finding": "manifestReads", "declare": "inputs", "values": ["{workspaceRoot}/lib/package.json"],
           "orIgnoreReads": ["{workspaceRoot}/lib/package.json"]},
          {"finding": "strayWrites", "declare": "outputs", "values": ["{workspaceRoot}/stray.txt"]},
          {"finding": "dependencyReads", "declare": "inputs", "values": ["^default"],
           "orIgnoreReads": ["^lib/**", "^util/**"]}
        ]},
        "app:clean": {"status": "audited", "findings": {}},
        "app:e2e": {"status": "unsandboxed", "reason": "its inputs cannot be resolved"},
        "app:lint": {"status": "audited", "findings": {
          "tsconfigReads": ["tools/x.js"],
          "strayWrites": [".git/FETCH_HEAD"]
        }, "suggestions": [{"finding": "tsconfigReads", "declare": "inputs", "values": ["{workspaceRoot}/tools/x.js"],
                            "orIgnoreReads": ["{workspaceRoot}/tools/x.js"]}]},
        "app:test": {"status": "notAudited", "reason": "the recording lost 12 events"},
        "docs:build": {"status": "restored"},
        "lib:build": {"status": "audited", "findings": {"readsOutsideInputs": ["tools/x.js"]},
                      "suggestions": [{"finding": "readsOutsideInputs", "declare": "inputs",
                                       "values": ["{workspaceRoot}/tools/x.js"],
                                       "orIgnoreReads": ["{workspaceRoot}/tools/x.js"]}]},
        "lib:lint": {"status": "refused", "reason": "Landlock cannot take its rules"}
      },
      "readByMany": [{"path": "tools/x.js", "tasks": 3}],
      "packagesReadByMany": [],
      "sharedSuggestions": [{"namedInput": "sharedGlobals",
                             "values": ["{workspaceRoot}/.nvmrc", "{workspaceRoot}/tools/x.js"],
                             "orIgnoreReads": ["{workspaceRoot}/.nvmrc", "{workspaceRoot}/tools/x.js"],
                             "targets": ["build", "lint"], "tasks": 3}]
    })"));
    CHECK(keys_at(text, "/tasks") == Paths{"app:build", "app:clean", "app:e2e", "app:lint", "app:test",
                                           "docs:build", "lib:build", "lib:lint"});
    CHECK(keys_at(text, "") ==
          Paths{"schemaVersion", "run", "mode", "recorder", "summary", "tasks", "readByMany", "packagesReadByMany",
                "sharedSuggestions"});
}

TEST_CASE("the report names its run, and each task its hash and provenance", "[report][sandbox-report]")
{
    RunAudit run;
    run.mode = "enforce";
    run.recorder = "ebpf";
    run.recorder_fallback = "";
    run.landlock_abi = 6;
    run.run = {"812-1", "GITHUB_RUN_ID", std::nullopt, {"3"}};
    TaskAudit t = audited("app:build");
    t.status = TaskStatus::enforced;
    t.hash = std::string(32, 'a');
    t.provenance = {"3", "ci-host", "6.8.0-1021-azure", "ebpf", 6, true, 17};
    TaskAudit r = other("app:test", TaskStatus::restored);
    r.provenance = {"3", "ci-host", "6.8.0-1021-azure", std::nullopt, 6, std::nullopt, 0};
    run.tasks = {t, r};
    run.finish();
    Json doc = parse(sandbox_report_json(run));
    const auto& top = std::get<std::map<std::string, Json>>(doc.v);
    CHECK(top.at("run") == parse(R"({"id": "812-1", "idFrom": "GITHUB_RUN_ID", "commit": null, "shards": ["3"]})"));
    const auto& tasks = std::get<std::map<std::string, Json>>(top.at("tasks").v);
    const auto& build = std::get<std::map<std::string, Json>>(tasks.at("app:build").v);
    CHECK(build.at("hash") == Json{std::string(32, 'a')});
    CHECK(build.at("provenance") == parse(R"({"shard": "3", "host": "ci-host", "kernel": "6.8.0-1021-azure",
        "recorder": "ebpf", "landlockAbi": 6, "overlay": true, "lostEvents": 17})"));
    const auto& test = std::get<std::map<std::string, Json>>(tasks.at("app:test").v);
    CHECK(test.count("hash") == 0);  // not computed: absent, not ""
    CHECK(test.at("provenance") == parse(R"({"shard": "3", "host": "ci-host", "kernel": "6.8.0-1021-azure",
        "recorder": null, "landlockAbi": 6, "overlay": null, "lostEvents": 0})"));
}

TEST_CASE("without a recorder the report says why, and recorder is null", "[report][sandbox-report]")
{
    RunAudit run;
    run.mode = "enforce";
    run.no_recorder = "strace is not installed";
    run.tasks = {other("app:build", TaskStatus::not_audited, "no recorder")};
    run.finish();
    CHECK(findings_only(sandbox_report_json(run)) == parse(R"({
      "schemaVersion": 1,
      "mode": "enforce",
      "recorder": null,
      "recorderUnavailable": "strace is not installed",
      "summary": {"tasks": 1, "audited": 0, "wentBeyond": 0, "restored": 0, "notAudited": 1,
                  "unsandboxed": 0, "refused": 0, "enforced": 0},
      "tasks": {"app:build": {"status": "notAudited", "reason": "no recorder"}},
      "readByMany": [],
      "packagesReadByMany": []
    })"));
}

TEST_CASE("paths in the report are escaped by the JSON writer", "[report][sandbox-report]")
{
    RunAudit run;
    run.recorder.emplace("ebpf");  // GCC 12 at -O2 takes `= "ebpf"` for a read of an unset optional (a false -Wmaybe-uninitialized)
    run.tasks = {audited("app:build", reads({"odd \"name\"\n.txt", "bad\xff.txt"}))};
    run.finish();
    std::string text = sandbox_report_json(run);
    auto doc = parse(text);
    const auto& tasks = std::get<std::map<std::string, Json>>(doc.v).at("tasks");
    const auto& findings = std::get<std::map<std::string, Json>>(
        std::get<std::map<std::string, Json>>(std::get<std::map<std::string, Json>>(tasks.v).at("app:build").v)
            .at("findings")
            .v);
    CHECK(findings.at("readsOutsideInputs") ==
          Json{std::vector<Json>{Json{std::string("bad\xef\xbf\xbd.txt")}, Json{std::string("odd \"name\"\n.txt")}}});
}

namespace {

// 40 tasks as a pnpm workspace of 10 projects runs them (build, lint, test, typecheck): pnpm reads .npmrc
// and pnpm-workspace.yaml for each, tsc the root tsconfig, vitest with vite-tsconfig-paths every
// project's tsconfig.json, three builds write an undeclared lib and two lints an .eslintcache.
RunAudit forty_tasks()
{
    const char* projects[] = {"api", "app", "cli", "config", "core", "docs", "lib", "ui", "utils", "web"};
    RunAudit run;
    for (const char* p : projects) {
        const std::string root = std::string("packages/") + p;
        for (const char* target : {"build", "lint", "test", "typecheck"}) {
            TaskFindings f;
            f.reads_outside_inputs = {"pnpm-workspace.yaml"};
            f.toolchain_reads = {".npmrc"};
            const std::string t = target;
            if (t == "typecheck")
                f.tsconfig_reads = {"tsconfig.base.json"};
            if (t == "test") {
                for (const char* q : projects)
                    if (std::string(q) != p)
                        f.tsconfig_reads.push_back(std::string("packages/") + q + "/tsconfig.json");
                f.temporary_files = {root + "/vite.config.ts.timestamp-1796405520738-3f2a1b.mjs"};
            }
            if (t == "build" && (std::string(p) == "api" || std::string(p) == "cli" || std::string(p) == "docs")) {
                f.stray_writes = {root + "/lib", root + "/lib/index.cjs"};
                f.created_directories = {root + "/lib"};
            }
            if (t == "lint" && (std::string(p) == "app" || std::string(p) == "web"))
                f.stray_writes = {root + "/.eslintcache"};
            TaskAudit a = audited(std::string(p) + ":" + t, f);
            a.project_root = root;
            run.tasks.push_back(a);
        }
    }
    run.finish();
    return run;
}

}  // namespace

TEST_CASE("a summary of 40 tasks: the shared change once, one line for the tasks with nothing of their own, and "
          "every count of tasks names them",
          "[report][sandbox-report]")
{
    const std::string text = sandbox_summary(forty_tasks());
    CHECK(text ==
          "Sandbox audit: 40 of 40 tasks went beyond what they declare\n"
          "  version and package managers' configuration read: .npmrc (40 tasks: api:build, api:lint, api:test and "
          "37 more)\n"
          "  read by many tasks:\n"
          "    packages/*/tsconfig.json (10 files, 10 tasks: api:test, app:test, cli:test and 7 more): TypeScript "
          "configuration\n"
          "    pnpm-workspace.yaml (40 tasks: api:build, api:lint, api:test and 37 more)\n"
          "    tsconfig.base.json (10 tasks: api:typecheck, app:typecheck, cli:typecheck and 7 more): TypeScript "
          "configuration, likely an input\n"
          "  what to declare once, in nx.json, rather than in each target:\n"
          "    \"namedInputs\": {\"sharedGlobals\": [\"{workspaceRoot}/.npmrc\", \"{workspaceRoot}/pnpm-workspace.yaml\", "
          "\"{workspaceRoot}/tsconfig.base.json\"]}\n"
          "      with \"sharedGlobals\" in \"default\" (\"default\": [\"{projectRoot}/**/*\", \"sharedGlobals\"]), and in "
          "the inputs of targets that name theirs without it\n"
          "      what cannot change the results may go in qk:ultracache.ignoreReads (in targetDefaults) instead, but "
          "not pnpm-workspace.yaml: the key holds it only by what it changes\n"
          "    \"targetDefaults\": {\"test\": {\"qk:ultracache\": {\"ignoreReads\": "
          "[\"{workspaceRoot}/packages/*/tsconfig.json\"]}}}\n"
          "      one tool reads the tsconfig.json of every directory there, likely only to find paths (as "
          "vite-tsconfig-paths does); if it can change the results, add it to \"sharedGlobals\" instead\n"
          "  api:build\n"
          "    2 written outside its outputs:\n"
          "      packages/api/lib/ (1 file, in a directory it created)\n"
          "    what to declare in its target:\n"
          "      \"outputs\": [\"{projectRoot}/lib\"]\n"
          "    and 2 files many tasks read: in nx.json, above\n"
          "  app:lint\n"
          "    1 written outside its outputs:\n"
          "      packages/app/.eslintcache\n"
          "    what to declare in its target:\n"
          "      \"outputs\": [\"{projectRoot}/.eslintcache\"]\n"
          "    and 2 files many tasks read: in nx.json, above\n"
          "  cli:build\n"
          "    2 written outside its outputs:\n"
          "      packages/cli/lib/ (1 file, in a directory it created)\n"
          "    what to declare in its target:\n"
          "      \"outputs\": [\"{projectRoot}/lib\"]\n"
          "    and 2 files many tasks read: in nx.json, above\n"
          "  docs:build\n"
          "    2 written outside its outputs:\n"
          "      packages/docs/lib/ (1 file, in a directory it created)\n"
          "    what to declare in its target:\n"
          "      \"outputs\": [\"{projectRoot}/lib\"]\n"
          "    and 2 files many tasks read: in nx.json, above\n"
          "  web:lint\n"
          "    1 written outside its outputs:\n"
          "      packages/web/.eslintcache\n"
          "    what to declare in its target:\n"
          "      \"outputs\": [\"{projectRoot}/.eslintcache\"]\n"
          "    and 2 files many tasks read: in nx.json, above\n"
          "  35 tasks went beyond only by what is counted above: api:lint, api:test, api:typecheck and 32 more\n");
    CHECK(text.find("only reads counted above") == std::string::npos);

    // Every line that counts tasks (but the header's totals) says which.
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line)) {
        auto at = line.find(" task");
        if (at == std::string::npos || at == 0 || !std::isdigit(static_cast<unsigned char>(line[at - 1])))
            continue;
        auto end = line.find_first_of(":)", at);
        CAPTURE(line);
        CHECK((end != std::string::npos && line[end] == ':'));
    }
}

TEST_CASE("tasks are named up to four, else the first three and how many more", "[report][sandbox-report]")
{
    auto restored = [](int n) {
        std::vector<TaskAudit> tasks;
        for (int i = 0; i < n; ++i)
            tasks.push_back(other("p" + std::to_string(i) + ":build", TaskStatus::restored));
        return summary_of(tasks);
    };
    CHECK(has_line(restored(4), "  4 tasks restored from the cache, so not audited: p0:build, p1:build, p2:build, "
                                "p3:build"));
    CHECK(has_line(restored(5), "  5 tasks restored from the cache, so not audited: p0:build, p1:build, p2:build "
                                "and 2 more"));
}

namespace {

TaskAudit enforced(std::string id, std::string root, bool failed, TaskFindings f = {})
{
    TaskAudit t{std::move(id), TaskStatus::enforced, "", std::move(f)};
    t.project_root = std::move(root);
    t.failed = failed;
    return t;
}

std::string enforce_summary_of(std::vector<TaskAudit> tasks, std::string landlock_only = "")
{
    RunAudit run;
    run.mode = "enforce";
    run.recorder = "ebpf";
    run.landlock_only = std::move(landlock_only);
    run.tasks = std::move(tasks);
    run.finish();
    return sandbox_summary(run);
}

}  // namespace

TEST_CASE("under enforce a task whose commands failed is named first, with what was refused and what to declare",
          "[report][sandbox-report]")
{
    // vitest --coverage writes coverage/.tmp/coverage-0.json where coverage is no output (over an overlay
    // the write lands, not to be kept), reads it back, is refused, and fails; app:build succeeded but
    // wrote a log outside its outputs.
    TaskFindings build;
    build.discarded_writes = {"packages/app/build.log"};
    TaskFindings coverage;
    coverage.refused_reads = {"packages/app/coverage/.tmp/coverage-0.json"};
    coverage.discarded_writes = {"packages/app/coverage"};
    TaskFindings refused_input;
    refused_input.refused_reads = {"scripts/stamp.mjs"};
    std::string text = enforce_summary_of({
        enforced("app:build", "packages/app", false, build),
        enforced("app:test", "packages/app", true, coverage),
        enforced("lib:build", "packages/lib", false),
        enforced("lib:stamp", "packages/lib", true, refused_input),
        // Failed with nothing listed: a refusal its rules allow (a removed output directory made again).
        enforced("lib:test", "packages/lib", true),
    });
    CHECK(text ==
          "Sandbox enforce: 3 of 5 tasks did what their declarations refuse; 1 failed with no refusal listed\n"
          "  app:test (failed)\n"
          "    1 read refused of what it wrote outside its outputs; declare that as an output:\n"
          "      packages/app/coverage/.tmp/coverage-0.json\n"
          "    1 written outside its outputs, not kept:\n"
          "      packages/app/coverage\n"
          "    what to declare in its target:\n"
          "      \"outputs\": [\"{projectRoot}/coverage\"]\n"
          "  lib:stamp (failed)\n"
          "    1 read refused; declare it as an input:\n"
          "      scripts/stamp.mjs\n"
          "    what to declare in its target:\n"
          "      \"inputs\": [\"{workspaceRoot}/scripts/stamp.mjs\"], or in qk:ultracache.ignoreReads if it cannot "
          "change the result\n"
          "  lib:test (failed)\n"
          "    it failed with no refusal listed that its declarations explain; see its output\n"
          "  app:build\n"
          "    1 written outside its outputs, not kept:\n"
          "      packages/app/build.log\n"
          "    what to declare in its target:\n"
          "      \"outputs\": [\"{projectRoot}/build.log\"]\n");
    // A task that kept to its declarations and succeeded is not named; one that succeeded is not marked.
    CHECK(text.find("lib:build") == std::string::npos);
    CHECK(text.find("app:build (failed)") == std::string::npos);
}

TEST_CASE("held by Landlock alone, a declared file output that did not exist yet is refused: its directory is the "
          "output to declare instead",
          "[report][sandbox-report]")
{
    TaskAudit build = enforced("lib:build", "packages/lib", true);
    build.file_outputs = {"packages/lib/dist/index.js", "packages/lib/dist/index.d.ts"};
    build.findings.refused_writes = {"packages/lib/dist/index.js", "packages/lib/stray.txt"};
    std::string text = enforce_summary_of({build}, "user namespaces are restricted");
    CHECK(text ==
          "Sandbox enforce: 1 of 1 task did what its declarations refuse\n"
          "  held by Landlock alone: user namespaces are restricted\n"
          "  lib:build (failed)\n"
          "    1 write outside its outputs refused:\n"
          "      packages/lib/stray.txt\n"
          "    1 write refused: a declared file output that did not exist yet, which Landlock alone cannot let a "
          "task create; declare its directory as the output instead:\n"
          "      packages/lib/dist/index.js\n"
          "    what to declare in its target:\n"
          "      \"outputs\": [\"{projectRoot}/dist\"] in place of [\"{projectRoot}/dist/index.js\"]\n"
          "      \"outputs\": [\"{projectRoot}/stray.txt\"]\n");

    RunAudit run;
    run.mode = "enforce";
    run.recorder = "ebpf";
    run.tasks = {build};
    run.finish();
    Json doc = parse(sandbox_report_json(run));
    const auto& task = std::get<std::map<std::string, Json>>(
        std::get<std::map<std::string, Json>>(std::get<std::map<std::string, Json>>(doc.v).at("tasks").v)
            .at("lib:build")
            .v);
    CHECK(task.at("suggestions") == parse(R"([
      {"finding": "refusedWrites", "declare": "outputs", "values": ["{projectRoot}/dist"],
       "inPlaceOf": ["{projectRoot}/dist/index.js"]},
      {"finding": "refusedWrites", "declare": "outputs", "values": ["{projectRoot}/stray.txt"]}])"));
}

TEST_CASE("names with terminal escapes are shown escaped, in the summary and in its JSON fragments",
          "[report][sandbox-report]")
{
    // Issue 25: a file, a project or a reason may hold ESC, BEL, CR or bytes that are not UTF-8.
    const std::string title = "cfg/\x1b]0;pwned\x07.json";
    TaskFindings evil = reads({title, "src/\x1b[2K\r\xff.ts"});
    std::string text = summary_of({audited("evil\x1b[8m:build", evil), audited("b:build", reads({title})),
                                   audited("c:build", reads({title})),
                                   other("d:build", TaskStatus::not_audited, "cannot read \x1b[2Kx")});
    CHECK(text.find_first_of("\x1b\x07\r\xff") == std::string::npos);
    CHECK(has_line(text, "  evil\\x1b[8m:build"));
    CHECK(has_line(text, "      src/\\x1b[2K\\r\\xff.ts"));
    CHECK(has_line(text, "      \"inputs\": [\"{workspaceRoot}/src/\\u001b[2K\\r\\xff.ts\"], or in "
                         "qk:ultracache.ignoreReads if it cannot change the result"));
    CHECK(has_line(text, "    cfg/\\x1b]0;pwned\\x07.json (3 tasks: b:build, c:build, evil\\x1b[8m:build)"));
    CHECK(has_line(text,
                   "    \"namedInputs\": {\"sharedGlobals\": [\"{workspaceRoot}/cfg/\\u001b]0;pwned\\u0007.json\"]}"));
    CHECK(has_line(text, "    d:build: cannot read \\x1b[2Kx"));
    // The report keeps the names: JSON's own escapes, and U+FFFD for the byte that is not UTF-8.
    RunAudit run;
    run.tasks = {audited("evil\x1b[8m:build", evil)};
    run.finish();
    std::string json = sandbox_report_json(run);
    CHECK(json.find("\"evil\\u001b[8m:build\"") != std::string::npos);
    CHECK(json.find("\"src/\\u001b[2K\\r\\ufffd.ts\"") != std::string::npos);
}

TEST_CASE("an @types package read through hoisting is said apart: tsc loads it with no import", "[report][sandbox-report]")
{
    TaskFindings f;
    f.hoisted_packages = {"@types/babel__core", "events"};
    std::string text = summary_of({audited("app:test", f)});
    // "Declare it as a dependency of the package importing it" does not fit what no package imports (issue 39).
    CHECK(has_line(text, "    1 installed @types package read through pnpm's hoisting, which the sandbox allows: tsc "
                         "loads every package in node_modules/@types with no import, so no package imports it; name the "
                         "types the project uses in its tsconfig's compilerOptions.types, or add it to its "
                         "devDependencies:"));
    CHECK(has_line(text, "      @types/babel__core"));
    CHECK(text.find("declare it as a dependency of the package importing it:\n      events\n") != std::string::npos);
}
