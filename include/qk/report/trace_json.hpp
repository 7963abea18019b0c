// The trace JSON document qk-trace writes with --json (schemas/trace.schema.json).
#pragma once

#include <string>
#include <vector>

#include "qk/record/recorder.hpp"

namespace qk::report {

// What was traced, for the report's header.
struct TraceRequest {
    std::vector<std::string> command;
    std::string cwd;
};

std::string trace_json(const TraceRequest& request, const record::Trace& trace);

// "SIGKILL" for 9; "SIG42" for a number without a name.
std::string signal_name(int signal);

}  // namespace qk::report
