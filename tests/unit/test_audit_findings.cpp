// TaskFindings and RunAudit::finish: what counts as going beyond, .git writes, and the run-wide views
// (read by many tasks and its thresholds, the paths counted once, the statuses counted).
#include <catch2/catch.hpp>

#include "qk/audit/findings.hpp"

using namespace qk::audit;
using Paths = std::vector<std::string>;

namespace {

TaskAudit audited(std::string id, TaskFindings findings = {})
{
    return {std::move(id), TaskStatus::audited, "", std::move(findings)};
}

TaskFindings reads(Paths paths)
{
    TaskFindings f;
    f.reads_outside_inputs = std::move(paths);
    return f;
}

// A run of `beyond` tasks that each read their own file outside their inputs, plus `sharing` of them
// that also read tools/x.js: where the read-by-many threshold lies.
RunAudit run_sharing(int beyond, int sharing)
{
    RunAudit run;
    for (int i = 0; i < beyond; ++i) {
        Paths p{"p" + std::to_string(i) + "/own.txt"};
        if (i < sharing)
            p.push_back("tools/x.js");
        run.tasks.push_back(audited("p" + std::to_string(i) + ":build", reads(p)));
    }
    run.finish();
    return run;
}

std::vector<std::pair<std::string, std::size_t>> pairs(const std::vector<PathCount>& counts)
{
    std::vector<std::pair<std::string, std::size_t>> out;
    for (const auto& c : counts)
        out.emplace_back(c.path, c.tasks);
    return out;
}

}  // namespace

TEST_CASE("normalise sorts each list, drops repeats and projects left without paths", "[audit][audit-findings]")
{
    TaskFindings f;
    f.reads_outside_inputs = {"b", "a", "b"};
    f.tsconfig_reads = {"tsconfig.json", "a/tsconfig.json", "tsconfig.json"};
    f.stray_writes = {"z", "y", "z"};
    f.unkeyed_reads = {".env", ".env"};
    f.manifest_reads = {"lib/package.json", "app/package.json", "lib/package.json"};
    f.toolchain_reads = {".nvmrc", ".npmrc", ".nvmrc"};
    f.dependency_reads = {{"lib", {"lib/b.js", "lib/a.js", "lib/b.js"}}, {"util", {}}};
    f.normalise();
    CHECK(f.reads_outside_inputs == Paths{"a", "b"});
    CHECK(f.tsconfig_reads == Paths{"a/tsconfig.json", "tsconfig.json"});
    CHECK(f.stray_writes == Paths{"y", "z"});
    CHECK(f.unkeyed_reads == Paths{".env"});
    CHECK(f.manifest_reads == Paths{"app/package.json", "lib/package.json"});
    CHECK(f.toolchain_reads == Paths{".npmrc", ".nvmrc"});
    CHECK(f.dependency_reads == std::map<std::string, Paths>{{"lib", {"lib/a.js", "lib/b.js"}}});
}

TEST_CASE("empty means no finding of any kind", "[audit][audit-findings]")
{
    CHECK(TaskFindings{}.empty());
    TaskFindings projects_without_paths;
    projects_without_paths.dependency_reads["lib"] = {};
    CHECK(projects_without_paths.empty());

    auto with = [](auto set) {
        TaskFindings f;
        set(f);
        return f.empty();
    };
    CHECK_FALSE(with([](TaskFindings& f) { f.reads_outside_inputs = {"a"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.tsconfig_reads = {"tsconfig.json"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.stray_writes = {"stray.txt"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.git_writes = {".git/index"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.unkeyed_reads = {".env"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.manifest_reads = {"lib/package.json"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.toolchain_reads = {".nvmrc"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.dependency_reads["lib"] = {"lib/a.js"}; }));
}

TEST_CASE("went_beyond counts what enforce refuses, not unkeyed reads or writes in .git", "[audit][audit-findings]")
{
    auto beyond = [](auto set) {
        TaskFindings f;
        set(f);
        return f.went_beyond();
    };
    CHECK_FALSE(TaskFindings{}.went_beyond());
    CHECK(beyond([](TaskFindings& f) { f.reads_outside_inputs = {"other/notes.txt"}; }));
    CHECK(beyond([](TaskFindings& f) { f.tsconfig_reads = {"tsconfig.base.json"}; }));
    CHECK(beyond([](TaskFindings& f) { f.manifest_reads = {"lib/package.json"}; }));
    CHECK(beyond([](TaskFindings& f) { f.toolchain_reads = {".npmrc"}; }));
    CHECK(beyond([](TaskFindings& f) { f.dependency_reads["lib"] = {"lib/a.js"}; }));
    CHECK(beyond([](TaskFindings& f) { f.stray_writes = {"stray.txt"}; }));
    CHECK(beyond([](TaskFindings& f) {
        f.git_writes = {".git/index"};
        f.stray_writes = {".github/x"};
    }));

    CHECK_FALSE(beyond([](TaskFindings& f) { f.unkeyed_reads = {".env", ".git/HEAD"}; }));
    CHECK_FALSE(beyond([](TaskFindings& f) { f.git_writes = {".git/index", "sub/.git/FETCH_HEAD"}; }));
    CHECK_FALSE(beyond([](TaskFindings& f) { f.unkeyed_packages = {"left-pad"}; }));
    CHECK_FALSE(beyond([](TaskFindings& f) { f.hoisted_packages = {"phantom"}; }));
    CHECK_FALSE(beyond([](TaskFindings& f) { f.dependency_reads["lib"] = {}; }));
    CHECK_FALSE(beyond([](TaskFindings& f) {
        f.unkeyed_reads = {".env"};
        f.git_writes = {".git/index"};
    }));
}

TEST_CASE("verified: audited or enforced, nothing lost, nothing the key or outputs could miss",
          "[audit][audit-findings]")
{
    CHECK(verified(audited("a:build")));
    TaskAudit enforced{"a:build", TaskStatus::enforced, "", {}};
    CHECK(verified(enforced));
    for (TaskStatus s : {TaskStatus::restored, TaskStatus::not_audited, TaskStatus::unsandboxed, TaskStatus::refused})
        CHECK_FALSE(verified(TaskAudit{"a:build", s, "", {}}));
    TaskAudit lost = audited("a:build");
    lost.provenance.lost_events = 1;
    CHECK_FALSE(verified(lost));
    // What leaves the result whole is forgiven...
    TaskFindings whole;
    whole.temporary_files = {"vite.config.ts.timestamp-1.mjs"};
    whole.replaced_reads = {"lib/dist/index.js"};
    whole.refused_outside = {"/root/.npmrc"};
    CHECK(verified(audited("a:build", whole)));
    // ...anything else is not, each kind on its own.
    auto with = [](auto set) {
        TaskFindings f;
        set(f);
        return verified(audited("a:build", f));
    };
    CHECK_FALSE(with([](TaskFindings& f) { f.reads_outside_inputs = {"x"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.tsconfig_reads = {"tsconfig.base.json"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.stray_writes = {"build.log"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.git_writes = {".git/index"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.unkeyed_reads = {".env"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.manifest_reads = {"lib/package.json"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.toolchain_reads = {".nvmrc"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.dependency_reads["lib"] = {"lib/src/a.ts"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.unkeyed_packages = {"typescript"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.hoisted_packages = {"lodash"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.refused_reads = {"x"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.refused_writes = {"x"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.discarded_writes = {"x"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.refused_unplaced = {"/dev/fd/3/x"}; }));
    CHECK_FALSE(with([](TaskFindings& f) { f.refused_calls = {"io_uring_setup"}; }));
}

TEST_CASE("status names are the report's", "[audit][audit-findings]")
{
    CHECK(std::string(status_name(TaskStatus::audited)) == "audited");
    CHECK(std::string(status_name(TaskStatus::restored)) == "restored");
    CHECK(std::string(status_name(TaskStatus::not_audited)) == "notAudited");
    CHECK(std::string(status_name(TaskStatus::unsandboxed)) == "unsandboxed");
    CHECK(std::string(status_name(TaskStatus::refused)) == "refused");
}

TEST_CASE("finish sorts the tasks, normalises the audited ones' findings and counts statuses",
          "[audit][audit-findings]")
{
    RunAudit run;
    TaskFindings git_only;
    git_only.git_writes = {".git/index"};
    run.tasks = {
        audited("lib:build", reads({"b", "a", "b"})),
        {"app:test", TaskStatus::not_audited, "the recording lost 12 events", {}},
        audited("app:build", git_only),
        {"docs:build", TaskStatus::restored, "", {}},
        {"app:e2e", TaskStatus::unsandboxed, "its inputs cannot be resolved", {}},
        {"lib:lint", TaskStatus::refused, "Landlock cannot take its rules", {}},
        audited("app:lint"),
        {"lib:test", TaskStatus::restored, "", {}},
    };
    run.finish();

    std::vector<std::string> ids;
    for (const auto& t : run.tasks)
        ids.push_back(t.task);
    CHECK(ids == Paths{"app:build", "app:e2e", "app:lint", "app:test", "docs:build", "lib:build", "lib:lint",
                       "lib:test"});
    CHECK(run.tasks[5].findings.reads_outside_inputs == Paths{"a", "b"});

    CHECK(run.counts.tasks == 8);
    CHECK(run.counts.audited == 3);
    CHECK(run.counts.went_beyond == 1);  // lib:build; app:build only wrote in .git
    CHECK(run.counts.restored == 2);
    CHECK(run.counts.not_audited == 1);
    CHECK(run.counts.unsandboxed == 1);
    CHECK(run.counts.refused == 1);
    CHECK(run.git_writers == 1);

    SECTION("finishing again changes nothing")
    {
        auto before = run.counts.went_beyond;
        run.finish();
        CHECK(run.counts.tasks == 8);
        CHECK(run.counts.went_beyond == before);
        CHECK(run.git_writers == 1);
    }
}

TEST_CASE("a path is read by many with at least 3 tasks and a quarter of those that went beyond",
          "[audit][audit-findings]")
{
    CHECK(run_sharing(2, 2).read_by_many.empty());  // 2 tasks are not many, whatever the run
    using Pairs = std::vector<std::pair<std::string, std::size_t>>;
    CHECK(pairs(run_sharing(3, 3).read_by_many) == Pairs{{"tools/x.js", 3}});
    CHECK(run_sharing(16, 3).read_by_many.empty());  // a quarter of 16 is 4
    CHECK(pairs(run_sharing(16, 4).read_by_many) == Pairs{{"tools/x.js", 4}});
    CHECK(run_sharing(13, 3).read_by_many.empty());  // a quarter of 13, rounded up, is 4
    CHECK(pairs(run_sharing(12, 3).read_by_many) == Pairs{{"tools/x.js", 3}});
}

TEST_CASE("read by many counts a task once per path, across reads and tsconfig reads", "[audit][audit-findings]")
{
    TaskFindings both;
    both.reads_outside_inputs = {"tsconfig.base.json"};
    both.tsconfig_reads = {"tsconfig.base.json"};
    RunAudit twice;
    twice.tasks = {audited("a:build", both), audited("b:build", both)};
    twice.finish();
    CHECK(twice.read_by_many.empty());  // 2 tasks, not 4 reads

    TaskFindings ts;
    ts.tsconfig_reads = {"tsconfig.base.json"};
    RunAudit mixed;
    mixed.tasks = {audited("a:build", both), audited("b:build", ts), audited("c:build", reads({"tsconfig.base.json"}))};
    mixed.finish();
    CHECK(pairs(mixed.read_by_many) == std::vector<std::pair<std::string, std::size_t>>{{"tsconfig.base.json", 3}});
}

TEST_CASE("read by many is sorted by path and counts only audited tasks", "[audit][audit-findings]")
{
    RunAudit run;
    for (const char* id : {"a:build", "b:build", "c:build"})
        run.tasks.push_back(audited(id, reads({"z/tool.js", "a/tool.js"})));
    TaskAudit restored{"d:build", TaskStatus::restored, "", reads({"z/tool.js", "a/tool.js"})};
    run.tasks.push_back(restored);
    run.finish();
    CHECK(pairs(run.read_by_many) ==
          std::vector<std::pair<std::string, std::size_t>>{{"a/tool.js", 3}, {"z/tool.js", 3}});
}

TEST_CASE("unkeyed, manifest and toolchain reads are counted per path across audited tasks", "[audit][audit-findings]")
{
    TaskFindings a, b;
    a.unkeyed_reads = {".git/HEAD", ".env", ".env"};
    a.manifest_reads = {"lib/package.json"};
    a.toolchain_reads = {".nvmrc", ".npmrc"};
    b.unkeyed_reads = {".git/HEAD"};
    b.manifest_reads = {"lib/package.json", "util/package.json"};
    b.toolchain_reads = {".npmrc"};
    TaskFindings skipped = a;
    RunAudit run;
    run.tasks = {audited("b:build", b), audited("a:build", a), {"c:build", TaskStatus::not_audited, "why", skipped}};
    run.finish();
    using Pairs = std::vector<std::pair<std::string, std::size_t>>;
    CHECK(pairs(run.unkeyed_reads) == Pairs{{".env", 1}, {".git/HEAD", 2}});
    CHECK(pairs(run.manifest_reads) == Pairs{{"lib/package.json", 2}, {"util/package.json", 1}});
    CHECK(pairs(run.toolchain_reads) == Pairs{{".npmrc", 2}, {".nvmrc", 1}});
    CHECK(run.read_by_many.empty());
    CHECK(run.counts.went_beyond == 2);  // manifest and toolchain reads count
}
