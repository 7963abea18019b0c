// `qk report html`: a --sandbox-report as one self-contained page (no network: its script and styles
// are in it), for a person rather than a dashboard.
#pragma once

#include <string>

#include "qk/audit/findings.hpp"

namespace qk::report {

// The page, holding the report as sandbox_report_json writes it.
std::string report_page(const audit::RunAudit& report);

// audit::finding_kinds() as the page reads them: [{"name", "one", "many", "words", "beyond"}], beyond saying
// whether a finding of the kind makes a task go beyond what it declares.
std::string finding_kinds_json();

}  // namespace qk::report
