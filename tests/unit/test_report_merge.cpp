// Reports across shards: the run's identity from the environment, a report read back as written, and
// merge's picks (the record that says most, conflicts, the least message, the lowest ABI) whatever the order.
#include <catch2/catch.hpp>
#include <algorithm>
#include <map>

#include "qk/report/entry_report.hpp"
#include "qk/report/report_merge.hpp"
#include "qk/report/report_reader.hpp"
#include "qk/report/run_identity.hpp"
#include "qk/report/run_report.hpp"
#include "qk/report/sandbox_report.hpp"

using namespace qk::audit;

namespace {

qk::EnvLookup env_of(std::map<std::string, std::string> vars)
{
    return [vars = std::move(vars)](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

Provenance seen(std::string shard, const std::optional<std::string>& recorder = "ebpf")
{
    return {std::move(shard), "host-" + std::string(recorder.value_or("none")), "6.8.0", recorder, 4, std::nullopt, 0};
}

TaskAudit task(std::string id, TaskStatus status, std::string hash, Provenance p, TaskFindings f = {})
{
    TaskAudit t{std::move(id), status, "", std::move(f)};
    t.hash = std::move(hash);
    t.provenance = std::move(p);
    return t;
}

RunAudit shard(std::string name, std::vector<TaskAudit> tasks, std::optional<std::string> recorder = "ebpf")
{
    RunAudit r;
    r.run = {"run-1", "QK_RUN_ID", "abc", {name}};
    r.recorder = std::move(recorder);
    r.tasks = std::move(tasks);
    r.finish();
    return r;
}

// Written, read back, written again: what a merge of one report gives.
std::string round_trip(const RunAudit& r)
{
    auto back = qk::report::read_sandbox_report(qk::report::sandbox_report_json(r), "r.json");
    REQUIRE(back);
    return qk::report::sandbox_report_json(*back);
}

std::string merged(std::vector<RunAudit> shards)
{
    std::vector<qk::report::NamedReport> named;
    for (std::size_t i = 0; i < shards.size(); ++i)
        named.push_back({"s" + std::to_string(i) + ".json", std::move(shards[i])});
    auto out = qk::report::merge_reports(std::move(named));
    REQUIRE(out);
    return qk::report::sandbox_report_json(*out);
}

}  // namespace

TEST_CASE("the run id comes from QK_RUN_ID, else the CI's, else is made up for this run", "[report][report-merge]")
{
    auto gh = qk::report::run_identity("/nonexistent",
                                       env_of({{"GITHUB_RUN_ID", "991"}, {"GITHUB_RUN_ATTEMPT", "2"},
                                               {"GITHUB_SHA", "f00d"}, {"CI_NODE_INDEX", "3"}}));
    CHECK(gh.id == "991-2");
    CHECK(gh.id_from == "GITHUB_RUN_ID");
    CHECK(gh.commit == "f00d");
    CHECK(gh.shards == std::vector<std::optional<std::string>>{"3"});

    auto own = qk::report::run_identity("/nonexistent", env_of({{"QK_RUN_ID", "nightly-7"}, {"GITHUB_RUN_ID", "991"},
                                                                {"QK_SHARD", "a"}, {"CI_NODE_INDEX", "3"}}));
    CHECK(own.id == "nightly-7");
    CHECK(own.id_from == "QK_RUN_ID");
    CHECK(own.shards == std::vector<std::optional<std::string>>{"a"});

    auto gitlab = qk::report::run_identity("/nonexistent", env_of({{"CI_PIPELINE_ID", "55"}, {"CI_COMMIT_SHA", "c1"}}));
    CHECK(gitlab.id == "55");
    CHECK(gitlab.commit == "c1");

    auto local = qk::report::run_identity("/nonexistent", env_of({}));
    CHECK(local.id_from == "local");
    CHECK(local.id.starts_with("local-"));
    CHECK_FALSE(local.commit);  // no git repository there
    CHECK(local.shards == std::vector<std::optional<std::string>>{std::nullopt});
    CHECK(qk::report::run_identity("/nonexistent", env_of({})).id != local.id);  // each run its own
}

TEST_CASE("a report reads back as it was written, writes in .git among its stray writes", "[report][report-merge]")
{
    TaskFindings f;
    f.reads_outside_inputs = {"tools/x.js"};
    f.stray_writes = {".gitignore", "out.txt"};
    // In .git as the rules decide it: anywhere, however cased (the reader once took only a top-level,
    // lower-case .git, so these two came back as stray writes enforce would refuse).
    f.git_writes = {".GIT/config", ".git/index", "sub/.git/FETCH_HEAD"};
    f.dependency_reads = {{"lib", {"lib/a.ts"}}};
    f.unkeyed_packages = {"left-pad"};
    RunAudit r = shard("0", {task("app:build", TaskStatus::audited, "0123456789abcdef0123456789abcdef", seen("0"), f),
                             task("app:test", TaskStatus::restored, "fedcba9876543210fedcba9876543210", seen("0", {}))});
    r.recorder_fallback = "no CAP_BPF";
    const std::string written = qk::report::sandbox_report_json(r);
    CHECK(round_trip(r) == written);
    auto back = qk::report::read_sandbox_report(written, "r.json");
    REQUIRE(back);
    CHECK(back->tasks[0].findings.git_writes == f.git_writes);
    CHECK(back->tasks[0].findings.stray_writes == f.stray_writes);
    CHECK(back->tasks[0].provenance == r.tasks[0].provenance);
}

TEST_CASE("a cache entry's sandbox report carries its one task whole, and refuses any other document",
          "[report][report-merge]")
{
    TaskFindings f;
    f.unkeyed_reads = {".env"};
    RunAudit run = shard("3", {}, "strace");
    run.mode = "enforce";
    run.landlock_abi = 4;
    TaskAudit t = task("app:build", TaskStatus::enforced, "0123456789abcdef0123456789abcdef", seen("3", "strace"), f);
    const std::string doc = qk::report::entry_report_json(t, run);
    auto back = qk::report::read_entry_report(doc, "entry");
    INFO((back ? std::string() : back.error().message));
    REQUIRE(back);
    CHECK(back->task == "app:build");
    CHECK(back->status == TaskStatus::enforced);
    CHECK(back->hash == t.hash);
    CHECK(back->provenance == t.provenance);
    CHECK(back->findings.unkeyed_reads == f.unkeyed_reads);
    CHECK_FALSE(verified(*back));
    CHECK_FALSE(back->from_remote_cache);
    t.from_remote_cache = true;  // as this run restored it: written and read back so
    auto remote = qk::report::read_entry_report(qk::report::entry_report_json(t, run), "entry");
    REQUIRE(remote);
    CHECK(remote->from_remote_cache);
    // The whole header came along: it reads as a report of its run, in its mode.
    auto as_report = qk::report::read_sandbox_report(doc, "entry");
    REQUIRE(as_report);
    CHECK(as_report->mode == "enforce");
    CHECK(as_report->run.id == "run-1");

    RunAudit two = shard("0", {task("a:x", TaskStatus::audited, "", seen("0")), task("b:x", TaskStatus::audited, "", seen("0"))});
    auto refused = qk::report::read_entry_report(qk::report::sandbox_report_json(two), "entry");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message == "entry: a cache entry's sandbox report holds one task, this one 2");
    CHECK_FALSE(qk::report::read_entry_report("{\"tasks\": 1}", "entry"));
    CHECK_FALSE(qk::report::read_entry_report("not json", "entry"));
}

TEST_CASE("suggestions read back whole: what ignoreReads fits better, and what a value replaces",
          "[report][report-merge]")
{
    TaskFindings test;
    test.tsconfig_reads = {"packages/a/tsconfig.json", "packages/b/tsconfig.json", "packages/c/tsconfig.json"};
    TaskAudit build = task("lib:build", TaskStatus::enforced, "0123456789abcdef0123456789abcdef", seen("0"));
    build.project_root = "packages/lib";
    build.file_outputs = {"packages/lib/dist/index.js"};
    build.findings.refused_writes = {"packages/lib/dist/index.js"};
    RunAudit r = shard("0", {task("app:test", TaskStatus::audited, "fedcba9876543210fedcba9876543210", seen("0"), test),
                             build});
    const std::string written = qk::report::sandbox_report_json(r);
    CHECK(written.find("\"preferIgnoreReads\"") != std::string::npos);
    CHECK(written.find("\"inPlaceOf\"") != std::string::npos);
    auto back = qk::report::read_sandbox_report(written, "r.json");
    REQUIRE(back);
    REQUIRE(back->tasks[0].given_suggestions);
    REQUIRE(back->tasks[0].given_suggestions->size() == 1);
    CHECK_FALSE(back->tasks[0].given_suggestions->front().prefer_ignore.empty());
    REQUIRE(back->tasks[1].given_suggestions);
    CHECK(back->tasks[1].given_suggestions->front().in_place_of ==
          std::vector<std::string>{"{projectRoot}/dist/index.js"});
    CHECK(round_trip(r) == written);  // as a merge of one report writes it
}

TEST_CASE("a merge keeps the record that says most, lists conflicts, and does not depend on order",
          "[report][report-merge]")
{
    const std::string h1(32, '1'), h2(32, '2');
    RunAudit a = shard("0", {task("lib:build", TaskStatus::audited, h1, seen("0")),
                             task("app:build", TaskStatus::audited, h1, seen("0"))});
    RunAudit b = shard("1", {task("lib:build", TaskStatus::restored, h1, seen("1", {})),
                             task("app:build", TaskStatus::audited, h2, seen("1", "strace"))},
                       "strace");
    b.landlock_abi = 3;  // given under enforce only
    b.recorder_fallback = "zz";
    RunAudit c = shard("2", {task("web:build", TaskStatus::not_audited, h1, seen("2"))});
    c.landlock_abi = 6;
    c.recorder_fallback = "aa";

    for (RunAudit* r : {&a, &b, &c})
        r->mode = "enforce";
    const std::string abc = merged({a, b, c});
    CHECK(merged({c, b, a}) == abc);
    CHECK(merged({b, a, c}) == abc);
    auto back = qk::report::read_sandbox_report(abc, "m.json");
    REQUIRE(back);
    CHECK(back->recorder == "mixed");
    CHECK(back->landlock_abi == 3);           // the lowest
    CHECK(back->recorder_fallback == "aa");   // the least
    CHECK(back->run.shards == std::vector<std::optional<std::string>>{"0", "1", "2"});
    REQUIRE(back->tasks.size() == 2);
    CHECK(back->tasks[0].task == "lib:build");
    CHECK(back->tasks[0].status == TaskStatus::audited);  // ran on shard 0, restored on 1: the run is kept
    CHECK(back->tasks[0].provenance.shard == "0");
    REQUIRE(back->conflicts.count("app:build") == 1);
    CHECK(back->conflicts.at("app:build").size() == 2);
    // Grouped either way, merged again like a shard's report.
    RunAudit ab = *qk::report::read_sandbox_report(merged({a, b}), "ab.json");
    RunAudit bc = *qk::report::read_sandbox_report(merged({b, c}), "bc.json");
    CHECK(merged({ab, c}) == abc);
    CHECK(merged({a, bc}) == abc);
    CHECK(merged({*back, a}) == abc);  // merging a shard again adds nothing
}

TEST_CASE("reports of different runs or modes do not merge", "[report][report-merge]")
{
    auto merge_ab = [](const RunAudit& a, const RunAudit& b) {
        std::vector<qk::report::NamedReport> two;
        two.push_back({"a.json", a});
        two.push_back({"b.json", b});
        return qk::report::merge_reports(std::move(two));
    };
    RunAudit a = shard("0", {});
    RunAudit b = shard("1", {});
    b.run.id = "run-2";
    auto out = merge_ab(a, b);
    REQUIRE_FALSE(out);
    CHECK(out.error().message.find("a.json is of run run-1 and b.json of run run-2") != std::string::npos);
    b = shard("1", {});
    b.mode = "enforce";
    auto refused = merge_ab(a, b);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("--sandbox=enforce") != std::string::npos);
}

TEST_CASE("a run report's task statuses have one name each and read back as written", "[report][report-merge]")
{
    using qk::report::RunStatus;
    const std::pair<RunStatus, std::string_view> named[] = {{RunStatus::succeeded, "succeeded"},
                                                            {RunStatus::failed, "failed"},
                                                            {RunStatus::skipped, "skipped"},
                                                            {RunStatus::cancelled, "cancelled"},
                                                            {RunStatus::not_run, "notRun"}};
    qk::report::RunReport report;
    report.run = {"run-1", "QK_RUN_ID", "abc", {"0"}};
    for (const auto& [status, name] : named) {
        CHECK(qk::report::run_status_name(status) == name);
        CHECK(qk::report::parse_run_status(name) == status);
        qk::report::TaskRun t;
        t.task = "p:" + std::string(name);
        t.status = status;
        report.tasks.push_back(std::move(t));
    }
    CHECK_FALSE(qk::report::parse_run_status("Succeeded"));
    CHECK_FALSE(qk::report::parse_run_status("not_run"));
    CHECK(qk::report::run_status_names() == "succeeded, failed, skipped, cancelled, notRun");

    const std::string written = qk::report::run_report_json(report);
    CHECK(written.find(R"("succeeded": 1)") != std::string::npos);  // the summary's counts
    CHECK(written.find(R"("failed": 1)") != std::string::npos);
    auto back = qk::report::read_run_report(written, "r.json");
    REQUIRE(back);
    REQUIRE(back->tasks.size() == report.tasks.size());
    for (std::size_t i = 0; i < report.tasks.size(); ++i)
        CHECK(back->tasks[i].status == report.tasks[i].status);
    CHECK(qk::report::run_report_json(*back) == written);

    std::string unknown = written;
    unknown.replace(unknown.find(R"("status": "cancelled")"), 21, R"("status": "canceled")");
    auto refused = qk::report::read_run_report(unknown, "r.json");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message == "r.json: tasks/p:cancelled/status: expected one of succeeded, failed, skipped, "
                                     "cancelled, notRun; got \"canceled\"");
}

TEST_CASE("a report that breaks the schema in several places is refused for the first", "[report][report-merge]")
{
    RunAudit r = shard("0", {task("a:build", TaskStatus::audited, "0123456789abcdef0123456789abcdef", seen("0")),
                             task("b:build", TaskStatus::audited, "fedcba9876543210fedcba9876543210", seen("0"))});
    std::string written = qk::report::sandbox_report_json(r);
    // Every task's status unknown and its host null: a:build's status is met first (a task's status is
    // read before its provenance, and the tasks stop at the first mistake). Then the run's id made a
    // number: the run is read before the tasks.
    for (auto [from, to] : {std::pair<std::string, std::string>{R"("host": "host-ebpf")", R"("host": null)"},
                            {R"("status": "audited")", R"("status": "seen")"}})
        for (std::size_t at = written.find(from); at != std::string::npos; at = written.find(from, at + to.size()))
            written.replace(at, from.size(), to);
    auto tasks_wrong = qk::report::read_sandbox_report(written, "r.json");
    REQUIRE_FALSE(tasks_wrong);
    CHECK(tasks_wrong.error().message ==
          "r.json: tasks/a:build/status: expected one of audited, restored, notAudited, unsandboxed, refused, enforced; "
          "got \"seen\"");
    const std::string id = R"("id": "run-1")";
    written.replace(written.find(id), id.size(), R"("id": 7)");
    auto run_wrong = qk::report::read_sandbox_report(written, "r.json");
    REQUIRE_FALSE(run_wrong);
    CHECK(run_wrong.error().message == "r.json: run/id: expected a string");
}
