// qk report merge | html: shards' reports (--sandbox-report or --report) as one report, and a
// --sandbox-report as a page.
#pragma once

#include <string>
#include <vector>

namespace qk::cli {

struct ReportOptions {
    std::vector<std::string> inputs;  // the reports, one or more
    std::string output;               // -o; "" writes the merged report to stdout (merge only)
};

// `qk report ...` is mostly allocation: 50 shards of 1,000 tasks touch 250 MB, and faulting that in
// 4 KiB pages was half its time. glibc backs malloc with transparent huge pages only when told so as the
// process starts (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), so qk report starts itself again with it,
// once. It spawns nothing, so no other program sees the setting. Returns only when it did not exec.
void reexec_with_huge_pages(char** argv);

// Merges the reports of one run's shards, either kind; prints a warning for each task the shards
// disagree on.
int run_report_merge(const ReportOptions& options);
// Writes the page of a report, or of several merged first.
int run_report_html(const ReportOptions& options);

}  // namespace qk::cli
