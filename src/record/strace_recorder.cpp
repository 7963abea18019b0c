#include "record/strace_recorder.hpp"

namespace qk::record {
Result<std::unique_ptr<StraceRecorder>> StraceRecorder::create() { return error("strace engine: not built yet"); }
Result<Trace> StraceRecorder::record(const Command&) { return error("strace engine: not built yet"); }
}  // namespace qk::record
