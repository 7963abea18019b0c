// The summary under --sandbox=enforce: which tasks had what their declarations refuse, refused or not
// kept, each with what to declare; a task whose commands failed first, named even when nothing it did is
// listed, so a run that failed on a refusal says which task and why.
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "qk/audit/suggestions.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/special_names.hpp"
#include "summary_lines.hpp"

namespace qk::report::summary {

using audit::RunAudit;
using audit::TaskAudit;
using audit::TaskFindings;
using audit::TaskStatus;

namespace {

// Its refused reads, less those of what it wrote itself (outside its outputs, so not kept or refused
// too): reading back its own undeclared output asks for that output, not an input.
std::pair<std::vector<std::string>, std::vector<std::string>> refused_reads_split(const TaskFindings& f)
{
    std::set<std::string, std::less<>> tried(f.discarded_writes.begin(), f.discarded_writes.end());
    tried.insert(f.refused_writes.begin(), f.refused_writes.end());
    std::vector<std::string> others, of_own;
    for (const std::string& p : f.refused_reads) {
        bool own = false;
        for (std::size_t end = p.size(); !own && end != std::string::npos && end > 0; end = p.rfind('/', end - 1))
            own = tried.contains(std::string_view(p).substr(0, end));
        (own ? of_own : others).push_back(p);
    }
    return {others, of_own};
}

// What the run's network proxy refused it: the hosts its declared list does not name, and where to name them.
void refused_network_lines(std::string& out, const TaskFindings& f)
{
    if (f.refused_network.empty())
        return;
    const bool one = f.refused_network.size() == 1;
    path_list(out,
              fmt::format("{}; to allow {}, add {} to its \"qk:sandbox\": {{\"network\": [...]}}:",
                          said(&TaskFindings::refused_network, f.refused_network.size()), one ? "it" : "them",
                          one ? "its host:port" : "their host:port"),
              f.refused_network);
}

// Once for the run: every host refused, with the tasks refused it, so a failed download is found at a glance.
void refused_hosts_line(std::string& out, const RunAudit& audit)
{
    std::vector<std::string> hosts = entries_with_tasks(audit, &TaskFindings::refused_network, std::nullopt, false);
    if (!hosts.empty())
        out += fmt::format("  {} refused by declared networks: {}\n", count_of(hosts.size(), "host"),
                           fmt::join(hosts, ", "));
}

void enforced_task_lines(std::string& out, const TaskAudit& t, const SummaryOptions& options)
{
    const TaskFindings& f = t.findings;
    out += "  " + printable(t.task) + (t.failed ? " (failed)" : "") + "\n";
    auto [reads, reads_of_own] = refused_reads_split(f);
    if (!reads.empty())
        path_list(out, fmt::format("{}; declare {} as {}:", said(&TaskFindings::refused_reads, reads.size()),
                                   reads.size() == 1 ? "it" : "them", reads.size() == 1 ? "an input" : "inputs"),
                  reads);
    if (!reads_of_own.empty())
        path_list(out,
                  fmt::format("{} refused of what it wrote outside its outputs; declare that as an "
                              "output:",
                              count_of(reads_of_own.size(), "read")),
                  reads_of_own);
    std::vector<std::string> writes, file_outputs, outputs_themselves, in_cache, links;
    for (const std::string& p : f.refused_writes)
        (t.refused_links.contains(p)       ? links
         : special_tree(p) == SpecialDir::qk ? in_cache
         : audit::output_itself(t, p)      ? outputs_themselves
         : std::find(t.file_outputs.begin(), t.file_outputs.end(), p) != t.file_outputs.end() ? file_outputs
                                                                                              : writes)
            .push_back(p);
    if (!writes.empty())
        path_list(out, fmt::format("{} outside its outputs refused:", count_of(writes.size(), "write")), writes);
    if (!file_outputs.empty())
        path_list(out,
                  fmt::format("{} refused: {} declared file output{} that did not exist yet, which Landlock alone "
                              "cannot let a task create; declare {} directory as the output instead:",
                              count_of(file_outputs.size(), "write"), file_outputs.size() == 1 ? "a" : "its",
                              file_outputs.size() == 1 ? "" : "s", file_outputs.size() == 1 ? "its" : "their"),
                  file_outputs);
    if (!outputs_themselves.empty())
        path_list(out,
                  fmt::format("{} refused of its declared output{} or what holds {}: Landlock alone grants what "
                              "lies beneath a directory, not the directory, so removing or replacing one needs "
                              "the overlay (see above why it is not used); nothing to declare:",
                              count_of(outputs_themselves.size(), "change"),
                              outputs_themselves.size() == 1 ? "" : "s", outputs_themselves.size() == 1 ? "it" : "them"),
                  outputs_themselves);
    if (!links.empty()) {
        std::vector<std::string> shown;
        for (const std::string& p : links)
            shown.push_back(p + " -> " + t.refused_links.at(p));
        path_list(out,
                  fmt::format("{} refused, pointing out of the workspace, which a "
                              "later task or run would write through; not applied, nothing to declare:",
                              count_of(links.size(), "symbolic link")),
                  shown);
    }
    if (!in_cache.empty())
        path_list(out,
                  fmt::format("{} refused in qk's cache, which is read-only to every task; nothing to declare:",
                              count_of(in_cache.size(), "write")),
                  in_cache);
    if (!f.refused_outside.empty())
        path_list(out,
                  said(&TaskFindings::refused_outside, f.refused_outside.size()) +
                      ", where enforce keeps the host's settings and devices from every task; nothing to declare:",
                  f.refused_outside);
    if (!f.discarded_writes.empty())
        path_list(out, said(&TaskFindings::discarded_writes, f.discarded_writes.size()) + ":", f.discarded_writes);
    if (!f.refused_calls.empty())
        out += fmt::format("    refused {}, which enforce does not allow (io_uring); tools fall back to plain system "
                           "calls, and one that does not fails\n",
                           fmt::join(f.refused_calls, ", "));
    refused_network_lines(out, f);
    if (!f.refused_unplaced.empty())
        path_list(out,
                  said(&TaskFindings::refused_unplaced, f.refused_unplaced.size()) + "; see what it opened there:",
                  f.refused_unplaced);
    if (!f.replaced_reads.empty())
        path_list(out,
                  fmt::format("{} (by another task): Landlock alone holds the files there as the task started; "
                              "run the task that makes {} before it (dependsOn), or over the overlay:",
                              said(&TaskFindings::replaced_reads, f.replaced_reads.size()),
                              f.replaced_reads.size() == 1 ? "it" : "them"),
                  f.replaced_reads);
    if (t.failed && !f.went_beyond() && f.replaced_reads.empty())
        // The recorder lists refused opens: a refused mkdir, rename or removal leaves nothing to name.
        out += "    it failed with no refusal listed that its declarations explain; see its output\n";
    out += declare_lines(t, nullptr);
    if (options.processes)
        process_lines(out, t);
}

}  // namespace

std::string enforce_summary(const RunAudit& audit, const SummaryOptions& options)
{
    const auto& c = audit.counts;
    std::string out;
    // A task that failed with no refusal listed did not show that it kept to its declarations: counted
    // apart, never among those that did.
    std::size_t unexplained = 0;
    for (const auto& t : audit.tasks)
        unexplained += t.status == TaskStatus::enforced && t.failed && !t.findings.went_beyond() &&
                       t.findings.replaced_reads.empty();
    if (c.enforced == 0)
        out = "Sandbox enforce: no task ran confined";
    else if (c.went_beyond == 0 && unexplained == 0)
        out = fmt::format("Sandbox enforce: {} kept to what {}", count_of(c.enforced, "task"),
                          c.enforced == 1 ? "it declares" : "they declare");
    else if (c.went_beyond == 0)
        out = fmt::format("Sandbox enforce: {} of {} failed with no refusal listed", unexplained,
                          count_of(c.enforced, "task"));
    else
        out = fmt::format("Sandbox enforce: {} of {} did what {} refuse{}", c.went_beyond,
                          count_of(c.enforced, "task"), c.enforced == 1 ? "its declarations" : "their declarations",
                          unexplained ? fmt::format("; {} failed with no refusal listed", unexplained) : "");
    out += "\n";
    if (!audit.landlock_only.empty())
        out += "  held by Landlock alone: " + audit.landlock_only + "\n";
    std::vector<const TaskAudit*> listed;
    for (const auto& t : audit.tasks)
        if (t.status == TaskStatus::enforced && (t.failed || t.findings.went_beyond()))
            listed.push_back(&t);
    std::stable_partition(listed.begin(), listed.end(), [](const TaskAudit* t) { return t->failed; });
    for (const TaskAudit* t : listed)
        enforced_task_lines(out, *t, options);
    refused_hosts_line(out, audit);
    // Held by Landlock alone: tasks whose output qk made before they ran, and which are not cached for it.
    std::vector<std::string> made;
    for (const auto& t : audit.tasks)
        if (t.status == TaskStatus::enforced && !t.reason.empty())
            made.push_back(printable(t.task));
    if (!made.empty())
        out += fmt::format("  not cached, as qk made an output directory before {} ran (a tool renaming or copying "
                           "into it leaves another tree): {}\n",
                           made.size() == 1 ? "it" : "they", fmt::join(made, ", "));
    if (!audit.recorder && c.enforced != 0)
        out += "  reads refused are not listed: " +
               (audit.no_recorder.empty() ? std::string("no recorder works here") : audit.no_recorder) + "\n";
    if (audit.stale_sandboxes)
        out += fmt::format("  removed {} sandbox {} left by an interrupted run\n", audit.stale_sandboxes,
                           audit.stale_sandboxes == 1 ? "directory" : "directories");
    restored_line(out, audit, "checked");
    status_block(out, audit, TaskStatus::unsandboxed, c.unsandboxed, "ran unsandboxed");
    status_block(out, audit, TaskStatus::refused, c.refused, "refused");
    return out;
}

}  // namespace qk::report::summary
