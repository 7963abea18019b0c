// qk report merge | html: shards' --sandbox-reports as one report, and a report as a page.
#pragma once

#include <string>
#include <vector>

namespace qk::cli {

struct ReportOptions {
    std::vector<std::string> inputs;  // the reports, one or more
    std::string output;               // -o; "" writes the merged report to stdout (merge only)
};

// Merges the reports of one run's shards; prints a warning for each task the shards disagree on.
int run_report_merge(const ReportOptions& options);
// Writes the page of a report, or of several merged first.
int run_report_html(const ReportOptions& options);

}  // namespace qk::cli
