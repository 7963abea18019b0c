// The lines both summaries (audit and enforce) write the same way; private to src/report.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "qk/audit/findings.hpp"
#include "qk/report/sandbox_summary.hpp"

namespace qk::report::summary {

// A kind of finding counted in the words of audit::finding_kinds() ("3 reads outside its inputs"), as the report
// page says it.
std::string said(std::vector<std::string> audit::TaskFindings::*list, std::size_t n);
// "1 task", "2 tasks"
std::string count_of(std::size_t n, const char* noun);
// "app:build, app:test, lib:build and 37 more": up to four named, else the first three; escaped.
std::string named(const std::vector<std::string>& ids);
// Every name the summary shows (paths, globs, task ids, project names) goes through qk::printable as
// the line is formatted, and a value in a JSON fragment through printable_json: a file named with
// terminal escapes is shown escaped, never played (docs/sandbox.md).

// A path as a line of the summary, escaped: a name made for one run says it is nothing to declare.
std::string path_line(const std::string& path);
// "    heading" and a line per path, each escaped.
void path_list(std::string& out, const std::string& heading, const std::vector<std::string>& paths);
// "    heading" and the lines as they are: made by path_line or with their names escaped already.
void line_list(std::string& out, const std::string& heading, const std::vector<std::string>& lines);
// "    what to declare in its target:" and a line per suggestion, or "" when there is none. With `audit`,
// what the run declares once for many tasks is left out.
std::string declare_lines(const audit::TaskAudit& task, const audit::RunAudit* audit);
// "  2 tasks not audited:" and a line per task with why.
void status_block(std::string& out, const audit::RunAudit& audit, audit::TaskStatus status, std::size_t n,
                  const char* what);
// "  2 tasks restored from the cache, so not <checked>: a:build, b:build"
void restored_line(std::string& out, const audit::RunAudit& audit, const char* checked);

// "    by process:" and a line per path with the chain behind its access, or nothing when the report
// names no process (SummaryOptions::processes).
void process_lines(std::string& out, const audit::TaskAudit& task);

// What a task reached on the network outside its declared network (going beyond), and "" when nothing;
// once for the run, what the audited tasks reached that their declarations allow (everything when they
// declare none) and on loopback, a line each with the tasks (sandbox_summary_network.cpp).
std::string undeclared_network_lines(const audit::TaskFindings& f);
void open_network_lines(std::string& out, const audit::RunAudit& audit);
// Each entry of `list` in the run's tasks (of status `only`, when given), with the tasks that hold it, as
// "host:port (a:build, b:build)" (`counted`: "host:port (2 tasks: a:build, b:build)"), escaped, by entry.
std::vector<std::string> entries_with_tasks(const audit::RunAudit& audit,
                                            std::vector<std::string> audit::TaskFindings::*list,
                                            std::optional<audit::TaskStatus> only, bool counted);

// The summary under --sandbox=enforce (sandbox_summary_enforce.cpp).
std::string enforce_summary(const audit::RunAudit& audit, const SummaryOptions& options);

}  // namespace qk::report::summary
