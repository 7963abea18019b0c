// The audit as the user reads it at the end of a sandboxed run.
#pragma once

#include <string>

#include "qk/audit/findings.hpp"

namespace qk::report {

struct SummaryOptions {
    // Under each task, the process behind each access listed, with its parents up to the task's
    // command (--verbose), as the report's "processes" holds them.
    bool processes = false;
};

// The closing summary, lines ending in '\n', in the shape of the spec's example:
// "Sandbox audit: 1 of 2 tasks went beyond what they declare", then per task what it did.
std::string sandbox_summary(const audit::RunAudit& audit, const SummaryOptions& options = {});

// "      by make -C lib <- sh -c make": the process behind an access and its parents, escaped, or "" when
// the chain is empty.
std::string process_chain_text(const std::vector<std::string>& chain);

}  // namespace qk::report
