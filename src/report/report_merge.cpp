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

// What a record is worth when two shards hold a task with one hash: one that ran sandboxed says
// what it did; a restore says nothing.
int rank(TaskStatus s)
{
    switch (s) {
    case TaskStatus::audited:
    case TaskStatus::enforced: return 0;
    case TaskStatus::not_audited: return 1;
    case TaskStatus::unsandboxed: return 2;
    case TaskStatus::refused: return 3;
    case TaskStatus::restored: return 4;
    }
    return 5;
}

// The best of a task's records with one hash, by a total order so that the pick does not depend on
// which shard came first: rank, then the record as JSON.
TaskAudit* best(const std::vector<TaskAudit*>& records)
{
    if (records.size() == 1)
        return records.front();
    TaskAudit* out = nullptr;
    std::pair<int, std::string> out_key;
    for (TaskAudit* t : records) {
        std::pair<int, std::string> key{rank(t->status), task_json(*t)};
        if (!out || key < out_key) {
            out = t;
            out_key = std::move(key);
        }
    }
    return out;
}

// The least non-empty value: shards' messages differ by host and path, and any one of them will do.
void least(std::string& into, const std::string& value)
{
    if (!value.empty() && (into.empty() || value < into))
        into = value;
}

}  // namespace

Result<audit::RunAudit> merge_reports(std::vector<NamedReport> reports)
{
    if (reports.empty())
        return error("no reports to merge");
    const NamedReport& first = reports.front();
    audit::RunAudit out;
    out.mode = first.report.mode;
    out.run.id = first.report.run.id;
    out.run.id_from = first.report.run.id_from;
    std::set<std::optional<std::string>> shards;
    std::set<std::string> commits, recorders;
    const NamedReport* commit_from = nullptr;
    for (const NamedReport& r : reports) {
        const audit::RunAudit& a = r.report;
        if (a.run.id != out.run.id)
            return error(fmt::format("{} is of run {} and {} of run {}: only the shards of one run merge (their "
                                     "QK_RUN_ID, or the CI's run id, must be the same)",
                                     first.name, out.run.id, r.name, a.run.id));
        if (a.mode != out.mode)
            return error(fmt::format("{} was written under --sandbox={} and {} under --sandbox={}: the shards of "
                                     "one run share a mode",
                                     first.name, out.mode, r.name, a.mode));
        if (a.run.commit) {
            if (!commits.empty() && !commits.contains(*a.run.commit))
                return error(fmt::format("{} ran commit {} and {} commit {}, under one run id: a run's shards "
                                         "check out one commit",
                                         commit_from->name, *commits.begin(), r.name, *a.run.commit));
            commits.insert(*a.run.commit);
            commit_from = &r;
        }
        // The least id source too: shards of one run name the same, but a merge must not depend on order.
        out.run.id_from = std::min(out.run.id_from, a.run.id_from);
        shards.insert(a.run.shards.begin(), a.run.shards.end());
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
    if (!commits.empty())
        out.run.commit = *commits.begin();
    out.run.shards.assign(shards.begin(), shards.end());
    if (recorders.size() == 1)
        out.recorder = *recorders.begin();
    else if (recorders.size() > 1)
        out.recorder = "mixed";

    // Every record of every report, tasks and earlier conflicts alike, by id and then by hash.
    std::map<std::string, std::map<std::string, std::vector<TaskAudit*>>> by_task;
    for (NamedReport& r : reports) {
        auto add = [&](TaskAudit& t) { by_task[t.task][t.hash].push_back(&t); };
        for (TaskAudit& t : r.report.tasks)
            add(t);
        for (auto& [id, records] : r.report.conflicts)
            for (TaskAudit& t : records)
                add(t);
    }
    out.tasks.reserve(by_task.size());
    for (auto& [id, hashes] : by_task) {
        if (hashes.size() == 1) {
            out.tasks.push_back(std::move(*best(hashes.begin()->second)));
            continue;
        }
        std::vector<TaskAudit> picked;
        for (auto& [hash, candidates] : hashes)
            picked.push_back(std::move(*best(candidates)));
        out.conflicts.emplace(id, std::move(picked));
    }
    out.finish();
    return out;
}

}  // namespace qk::report
