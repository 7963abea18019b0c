// The short human summary qk-trace prints on stderr.
#pragma once

#include <string>

#include "qk/record/recorder.hpp"
#include "qk/report/trace_json.hpp"

namespace qk::report {

std::string trace_summary(const TraceRequest& request, const record::Trace& trace);

}  // namespace qk::report
