// The audit as the user reads it at the end of a sandboxed run.
#pragma once

#include <string>

#include "qk/audit/findings.hpp"

namespace qk::report {

// The closing summary, lines ending in '\n', in the shape of the spec's example:
// "Sandbox audit: 1 of 2 tasks went beyond what they declare", then per task what it did.
std::string sandbox_summary(const audit::RunAudit& audit);

}  // namespace qk::report
