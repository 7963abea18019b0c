// `qk report merge`: the --sandbox-reports of one run's shards as one report of the same schema.
#pragma once

#include <string>
#include <vector>

#include "qk/audit/findings.hpp"
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

}  // namespace qk::report
