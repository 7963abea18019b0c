// The audit of one task: its recording judged, access by access, by its rules. It never knows which
// recorder made the recording.
#pragma once

#include <time.h>

#include "qk/audit/findings.hpp"
#include "qk/record/recording.hpp"
#include "qk/rules/rules.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::audit {

// Every access the rules do not allow, by kind, with workspace-relative paths, normalised. A path the
// task wrote is judged as a write only: a file it writes and reads back is listed once, as written. A
// read through a symbolic link is allowed when the path as spelled is.
TaskFindings classify(const record::Recording& recording, const rules::Rules& rules, const workspace::Workspace& ws);

// The audit of a task that ran: its findings, or not audited with why when the recording is incomplete
// (a partial list would claim a proof it does not have).
TaskAudit audit_task(std::string task, const record::Recording& recording, const rules::Rules& rules,
                     const workspace::Workspace& ws);

// Under enforce: the opens the sandbox refused (kDenied in the recording, or over a read mask, kProbe
// on a path the workspace holds) that the task's rules refuse too, into `out` (workspace-relative,
// normalised): reads, and, when the task is held by Landlock alone,
// writes (a refused change of a path it may read but not write, or of one that is not there: it tried to
// create it; and a change the rules allow in a directory they do not, which Landlock alone cannot allow:
// a file output that did not exist, an output directory removed itself). Held by Landlock alone, a read
// the rules allow of a file changed since `rules_built` was refused because the file was replaced (by
// another task) after its rules were built: replaced_reads. Any other refusal the rules would allow (file
// modes) is not the task's doing and is left out. What its declared network held from it is added as
// refusedNetwork (refused_network_attempts, qk/audit/network_findings.hpp).
struct RefusalContext {
    bool landlock_only = false;
    bool failed = false;  // the task's commands failed: only then are a read mask's hidden probes listed
    struct timespec rules_built {};  // when its Landlock rules were built (CLOCK_REALTIME_COARSE, as st_ctim)
};
void refused_accesses(const record::Recording& recording, const rules::Rules& rules, const RefusalContext& context,
                      TaskFindings& out);

}  // namespace qk::audit
