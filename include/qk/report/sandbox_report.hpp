// The --sandbox-report JSON (schemas/sandbox-report.schema.json): the audit as dashboards read it, a
// contract whose field names never change.
#pragma once

#include <string>

#include "qk/audit/findings.hpp"

namespace qk::report {

// The --sandbox-report document (schemaVersion 1), ending in '\n'.
std::string sandbox_report_json(const audit::RunAudit& audit);

}  // namespace qk::report
