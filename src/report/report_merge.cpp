// Merging shards' reports. Every choice is a commutative, associative pick (a union, a minimum, the
// best record by a total order), so the shards' order and grouping never change the result.
#include "qk/report/report_merge.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "qk/report/sandbox_report.hpp"

namespace qk::report {
namespace {

using audit::TaskAudit;
using audit::TaskStatus;

// What a sandbox record is worth when two shards hold a task with one hash: one that ran sandboxed
// says what it did; a restore says nothing.
int rank(const TaskAudit& t)
{
    switch (t.status) {
    case TaskStatus::audited:
    case TaskStatus::enforced: return 0;
    case TaskStatus::not_audited: return 1;
    case TaskStatus::unsandboxed: return 2;
    case TaskStatus::refused: return 3;
    case TaskStatus::restored: return 4;
    }
    return 5;
}

// A run record: one whose commands ran, then one restored, then one that never started; one that
// succeeded before one that failed.
int rank(const TaskRun& t)
{
    const int source = t.source == report::ResultSource::ran ? 0 : t.source == report::ResultSource::none ? 2 : 1;
    const int status = t.status == RunStatus::succeeded ? 0 : t.status == RunStatus::failed ? 1 : 2;
    return source * 3 + status;
}

std::string record_json(const TaskAudit& t) { return task_json(t); }
std::string record_json(const TaskRun& t) { return task_run_json(t); }
const std::string& id_of(const TaskAudit& t) { return t.task; }
const std::string& id_of(const TaskRun& t) { return t.task; }

// The best of a task's records with one hash, by a total order so that the pick does not depend on
// which shard came first: rank, then the record as JSON.
template <class T>
T* best(const std::vector<T*>& records)
{
    if (records.size() == 1)
        return records.front();
    T* out = nullptr;
    std::pair<int, std::string> out_key;
    for (T* t : records) {
        std::pair<int, std::string> key{rank(*t), record_json(*t)};
        if (!out || key < out_key) {
            out = t;
            out_key = std::move(key);
        }
    }
    return out;
}

// Every record of every report, tasks and earlier conflicts alike, by id and then by hash: one hash
// gives the task its best record, several make it a conflict of each hash's best.
template <class T>
struct Records {
    std::map<std::string, std::map<std::string, std::vector<T*>>> by_task;

    void add(std::vector<T>& tasks, std::map<std::string, std::vector<T>>& conflicts)
    {
        for (T& t : tasks)
            by_task[id_of(t)][t.hash].push_back(&t);
        for (auto& [id, records] : conflicts)
            for (T& t : records)
                by_task[id][t.hash].push_back(&t);
    }
    void pick(std::vector<T>& tasks, std::map<std::string, std::vector<T>>& conflicts)
    {
        tasks.reserve(by_task.size());
        for (auto& [id, hashes] : by_task) {
            if (hashes.size() == 1) {
                tasks.push_back(std::move(*best(hashes.begin()->second)));
                continue;
            }
            std::vector<T> picked;
            for (auto& [hash, candidates] : hashes)
                picked.push_back(std::move(*best(candidates)));
            conflicts.emplace(id, std::move(picked));
        }
    }
};

// The least non-empty value: shards' messages differ by host and path, and any one of them will do.
void least(std::string& into, const std::string& value)
{
    if (!value.empty() && (into.empty() || value < into))
        into = value;
}

// The run the reports share, with every shard: an Error when their run ids or commits differ.
template <class Named>
Result<audit::RunIdentity> one_run(const std::vector<Named>& reports)
{
    if (reports.empty())
        return error("no reports to merge");
    const Named& first = reports.front();
    audit::RunIdentity out;
    out.id = first.report.run.id;
    out.id_from = first.report.run.id_from;
    std::set<std::optional<std::string>> shards;
    const Named* commit_from = nullptr;
    for (const Named& r : reports) {
        const audit::RunIdentity& run = r.report.run;
        if (run.id != out.id)
            return error(fmt::format("{} is of run {} and {} of run {}: only the shards of one run merge (their "
                                     "QK_RUN_ID, or the CI's run id, must be the same)",
                                     first.name, out.id, r.name, run.id));
        if (run.commit) {
            if (out.commit && *out.commit != *run.commit)
                return error(fmt::format("{} ran commit {} and {} commit {}, under one run id: a run's shards "
                                         "check out one commit",
                                         commit_from->name, *out.commit, r.name, *run.commit));
            out.commit = run.commit;
            commit_from = &r;
        }
        // The least id source too: shards of one run name the same, but a merge must not depend on order.
        out.id_from = std::min(out.id_from, run.id_from);
        shards.insert(run.shards.begin(), run.shards.end());
    }
    out.shards.assign(shards.begin(), shards.end());
    return out;
}

}  // namespace

Result<audit::RunAudit> merge_reports(std::vector<NamedReport> reports)
{
    QK_TRY(run, one_run(reports));
    audit::RunAudit out;
    out.run = std::move(run).value();
    out.mode = reports.front().report.mode;
    std::set<std::string> recorders;
    for (const NamedReport& r : reports) {
        const audit::RunAudit& a = r.report;
        if (a.mode != out.mode)
            return error(fmt::format("{} was written under --sandbox={} and {} under --sandbox={}: the shards of "
                                     "one run share a mode",
                                     reports.front().name, out.mode, r.name, a.mode));
        if (a.recorder) {
            if (*a.recorder == "mixed")
                recorders.insert({"ebpf", "strace"});
            else
                recorders.insert(*a.recorder);
        }
        least(out.no_recorder, a.no_recorder);
        least(out.recorder_fallback, a.recorder_fallback);
        least(out.landlock_only, a.landlock_only);
        if (a.landlock_abi > 0 && (out.landlock_abi == 0 || a.landlock_abi < out.landlock_abi))
            out.landlock_abi = a.landlock_abi;
        out.stale_sandboxes += a.stale_sandboxes;
    }
    if (recorders.size() == 1)
        out.recorder = *recorders.begin();
    else if (recorders.size() > 1)
        out.recorder = "mixed";
    Records<TaskAudit> records;
    for (NamedReport& r : reports)
        records.add(r.report.tasks, r.report.conflicts);
    records.pick(out.tasks, out.conflicts);
    out.finish();
    return out;
}

Result<RunReport> merge_run_reports(std::vector<NamedRunReport> reports)
{
    QK_TRY(run, one_run(reports));
    RunReport out;
    out.run = std::move(run).value();
    Records<TaskRun> records;
    for (NamedRunReport& r : reports)
        records.add(r.report.tasks, r.report.conflicts);
    records.pick(out.tasks, out.conflicts);  // by id: the shards' plans do not make one order
    return out;
}

}  // namespace qk::report
