// The sandbox report a cache entry carries: a --sandbox-report holding its one task, so that a task
// restored from a shared cache on another machine brings what the sandbox saw where it ran (its mode,
// recorder, findings, provenance and the run that made it), and the trust policy can judge it.
#pragma once

#include <string>
#include <string_view>

#include "qk/audit/findings.hpp"
#include "qk/util/result.hpp"

namespace qk::report {

// `run` gives the header (mode, recorder, Landlock, the run's identity); its tasks are ignored.
std::string entry_report_json(const audit::TaskAudit& task, const audit::RunAudit& run);

// The task of a document entry_report_json made. `name` says where it came from, for errors. An Error
// when it is not a sandbox report or holds other than one task.
Result<audit::TaskAudit> read_entry_report(std::string_view json, const std::string& name);

}  // namespace qk::report
