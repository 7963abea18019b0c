// The audit of one task: its recording judged, access by access, by its rules. It never knows which
// recorder made the recording.
#pragma once

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

}  // namespace qk::audit
