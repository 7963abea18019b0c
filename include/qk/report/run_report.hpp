// The --report JSON (schemas/run-report.schema.json): the run as a dashboard reads it, each task with
// its status, its key's hash, where its result came from and why it ran, and its audit.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qk/audit/findings.hpp"

namespace qk::report {

// How a task of the run ended: the report's "status".
enum class RunStatus { succeeded, failed, skipped, cancelled, not_run };

// "succeeded", "failed", "skipped", "cancelled", "notRun": the one table of their names, for the report
// written and read back.
std::string_view run_status_name(RunStatus status);
// The status `run_status_name` calls so; nullopt for any other name.
std::optional<RunStatus> parse_run_status(std::string_view name);
// Every name, in the order above, as "succeeded, failed, ...": for a message that lists them.
std::string run_status_names();

// Where a task's result came from: the report's "source" (none: it did not run).
enum class ResultSource { none, ran, restored, restored_in_place, restored_remote };

// "ran", "restored", "restoredInPlace", "restoredRemote" ("" for none), and back: one table, as for the status.
std::string_view result_source_name(ResultSource source);
std::optional<ResultSource> parse_result_source(std::string_view name);

struct TaskRun {
    std::string task;
    RunStatus status = RunStatus::not_run;
    std::string hash;               // of its declared key; "" when it could not be computed
    ResultSource source = ResultSource::none;
    // Why it ran: the recorded read that changed, no entry for its key, caching off or skipped.
    std::string ran_because;
    std::int64_t duration_ms = 0;   // of its commands, or of the run that stored what was restored
    // Shared and filled only when a report is written: a run of 5,000 tasks keeps 5,000 of these, and
    // most tasks share one machine's provenance.
    std::shared_ptr<const audit::Provenance> provenance;   // the machine, and how the sandbox saw it
    std::shared_ptr<const audit::TaskFindings> audit;       // its findings, when it was audited
};

// A --report as written or read back: in a merge of shards' reports, tasks met with different hashes
// are in `conflicts` (by id, sorted by hash), not in `tasks`.
struct RunReport {
    audit::RunIdentity run;
    std::vector<TaskRun> tasks;  // in the order planned; a merge's by id
    std::map<std::string, std::vector<TaskRun>> conflicts;
};

// The --report document (schemaVersion 1), ending in '\n'.
std::string run_report_json(const RunReport& report);

// RunMany's: `audit`, when the run was audited, gives each audited task its findings as "audit"; a task
// not audited has none.
std::string run_report_json(const std::vector<TaskRun>& tasks, const audit::RunAudit* audit,
                            const audit::RunIdentity& run);

// One task's object on one line: what a merge compares records by.
std::string task_run_json(const TaskRun& task);

}  // namespace qk::report
