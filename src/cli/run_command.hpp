// qk run-many and qk run: options as parsed, handed to the runner.
#pragma once

#include <string>
#include <vector>

#include "qk/util/settings.hpp"

namespace qk::cli {

struct RunOptions {
    std::vector<std::string> targets, projects, exclude;
    bool single_task = false;  // qk run P:T
    std::string task;          // qk run's task as written: project:target[:configuration]
    std::string configuration; // -c
    unsigned parallel = 0;     // 0: the number of cores
    bool skip_cache = false;
    bool dry_run = false;
    bool exclude_task_dependencies = false;
    std::string directory = ".";
    bool sandbox = false;       // --sandbox
    std::string sandbox_mode;   // --sandbox=MODE
    std::string sandbox_report; // --sandbox-report FILE
    std::string recorder;       // --recorder, else QK_RECORDER, else auto
    bool no_wait = false;       // --no-wait
    bool record = false;        // --record
    std::string report;         // --report FILE
    std::string remote_cache;   // --remote-cache read|readwrite|off
    std::string output_style;   // --output-style stream|static|dynamic; empty: not given
    bool verbose = false;       // -v, --verbose
};

// The run's settings (qk/util/settings.hpp), with the remote cache's secrets then taken out of qk's
// environment and qk made undumpable when it holds one (docs/remote-cache.md). Called before anything is
// started: qk affected's git too.
Settings read_run_settings();

// Runs the tasks; returns the exit status (0 when every task succeeded). Bad input is a FatalError.
int run_tasks(const RunOptions& options);
int run_tasks(const RunOptions& options, Settings settings);

}  // namespace qk::cli
