// The audit summary's lines for what tasks reached on the network (summary_lines.hpp): per task, what its
// declared network does not name, going beyond; once for the run, what their declarations allow and the
// machine's own, each with the tasks that reached it, as the spec keeps the network open and lists it (a
// line per task would repeat a test database's port forty times).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "qk/util/printable.hpp"
#include "summary_lines.hpp"

namespace qk::report::summary {

using audit::TaskFindings;

namespace {

// "  words: host:port (2 tasks: a:build, b:build), ..." for the entries of `list` in the audited tasks.
void entries_line(std::string& out, const audit::RunAudit& audit, std::vector<std::string> TaskFindings::*list,
                  const char* words)
{
    std::vector<std::string> parts = entries_with_tasks(audit, list, audit::TaskStatus::audited, true);
    if (!parts.empty())
        out += fmt::format("  {}: {}\n", words, fmt::join(parts, ", "));
}

}  // namespace

std::vector<std::string> entries_with_tasks(const audit::RunAudit& audit, std::vector<std::string> TaskFindings::*list,
                                            std::optional<audit::TaskStatus> only, bool counted)
{
    std::map<std::string, std::vector<std::string>> by_entry;
    for (const audit::TaskAudit& t : audit.tasks)
        if (!only || t.status == *only)
            for (const std::string& entry : t.findings.*list)
                by_entry[entry].push_back(t.task);
    std::vector<std::string> parts;
    for (const auto& [entry, tasks] : by_entry)
        parts.push_back(counted ? fmt::format("{} ({}: {})", printable(entry), count_of(tasks.size(), "task"), named(tasks))
                                : fmt::format("{} ({})", printable(entry), named(tasks)));
    return parts;
}

std::string undeclared_network_lines(const TaskFindings& f)
{
    std::string out;
    if (!f.undeclared_network.empty())
        path_list(out, said(&TaskFindings::undeclared_network, f.undeclared_network.size()) + ":",
                  f.undeclared_network);
    return out;
}

void open_network_lines(std::string& out, const audit::RunAudit& audit)
{
    entries_line(out, audit, &TaskFindings::network, "reached on the network, which the declared networks allow");
    entries_line(out, audit, &TaskFindings::loopback_network, "reached on their own machine (loopback), not judged");
}

}  // namespace qk::report::summary
