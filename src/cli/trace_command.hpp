// qk-trace: record every file a command touches. The command-line wiring lives in qk_trace_main.cpp;
// this is what it runs.
#pragma once

#include <string>
#include <vector>

namespace qk::cli {

struct TraceOptions {
    std::string recorder = "auto";  // --recorder, else QK_RECORDER, else auto
    std::string json_path;          // --json FILE ("-" for stdout)
    std::string directory;          // -C DIR
    std::vector<std::string> command;
};

// Runs the command and returns qk-trace's exit status: the command's (128 + signal when killed),
// 127 when it could not be started. Throws FatalError for qk-trace's own errors.
int run_trace(const TraceOptions& options);

}  // namespace qk::cli
