// The reports read back, for `qk report merge` and `qk report html`: a --sandbox-report into the
// RunAudit it was written from, a --report into its RunReport, every field the schema names checked
// as it is read.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "qk/audit/findings.hpp"
#include "qk/report/run_report.hpp"
#include "qk/util/result.hpp"

namespace qk::report {

// `name` (the file) starts every error, with where in the document: "a.json: tasks/app:build/status:
// expected one of audited, restored, ...". A report of another schemaVersion is refused.
Result<audit::RunAudit> read_sandbox_report(std::string_view json, const std::string& name);

// Reads the file; errors as above, and when it cannot be read.
Result<audit::RunAudit> load_sandbox_report(const std::string& path);

Result<RunReport> read_run_report(std::string_view json, const std::string& name);

// Either kind, told apart by what it holds (a --sandbox-report has "mode").
struct AnyReport {
    std::optional<audit::RunAudit> sandbox;
    std::optional<RunReport> run;
};
Result<AnyReport> load_report(const std::string& path);

}  // namespace qk::report
