// qk report check REPORT.json [--json]: every finding a stored --sandbox-report holds, re-judged against
// today's declarations (project.json, package.json, nx.json, ignoreReads, scratch) without running
// anything: per task ok, the findings still unexpected, those now covered. Exits 1 while any remain.
#pragma once

#include <string>

namespace qk::cli {

struct ReportCheckOptions {
    std::string report;
    bool json = false;
    bool verbose = false;  // -v: the process behind each access, as the report names it
    std::string directory = ".";  // where the workspace is found, upward
};

int run_report_check(const ReportCheckOptions& options);

}  // namespace qk::cli
