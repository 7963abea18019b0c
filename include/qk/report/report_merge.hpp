// `qk report merge`: the reports of one run's shards as one report of the same schema, either kind.
#pragma once

#include <string>
#include <vector>

#include "qk/audit/findings.hpp"
#include "qk/report/run_report.hpp"
#include "qk/util/result.hpp"

namespace qk::report {

struct NamedReport {
    std::string name;  // the file it came from, for errors
    audit::RunAudit report;
};

// Tasks keyed by id and hash: one record per task (the one that says most when shards agree on its
// hash); a task met with different hashes goes to `conflicts`, each hash's record once. Shards, the
// recorder ("mixed" when they differ), the summary and what many tasks read are recomputed over all.
// Associative and independent of order, so a merged report merges again like a shard's. An Error for
// reports of different runs (id or commit) or modes, naming the files.
Result<audit::RunAudit> merge_reports(std::vector<NamedReport> reports);

struct NamedRunReport {
    std::string name;
    RunReport report;
};

// --reports alike: tasks by id and hash (a record that ran before one restored, one that succeeded
// before one that failed), conflicts apart, the summary counted again, tasks in order of id.
Result<RunReport> merge_run_reports(std::vector<NamedRunReport> reports);

}  // namespace qk::report
