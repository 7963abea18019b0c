// qk report fix REPORT.json [--write]: the edits to the file defining each target (its project.json, or its
// package.json's "nx" beside the script) that a --sandbox-report's suggestions amount to (inputs for what a
// task read, outputs for what it wrote), printed as a unified diff, or written with --write, keeping each
// file's formatting, key order and comments.
#pragma once

#include <string>

namespace qk::cli {

struct ReportFixOptions {
    std::string report;
    bool write = false;
    // Also declare, for a target that declares no network, the hosts its tasks reached: its list, which
    // enforce then holds it to. Asked, since it closes what the spec leaves open.
    bool declare_network = false;
    std::string directory = ".";
};

int run_report_fix(const ReportFixOptions& options);

}  // namespace qk::cli
