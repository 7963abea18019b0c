// The closing summary of a sandboxed run: what each task did beyond its declarations, with what many
// tasks share, and what enforce allows, said once rather than per task.
#include <fmt/core.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "qk/report/sandbox_summary.hpp"

#include "qk/audit/suggestions.hpp"

namespace qk::report {

using audit::PathCount;
using audit::RunAudit;
using audit::TaskAudit;
using audit::TaskFindings;
using audit::TaskStatus;

namespace {

// "1 task", "2 tasks"
std::string count_of(std::size_t n, const char* noun)
{
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// ".npmrc (3 tasks), .nvmrc (1 task)"
std::string path_counts(const std::vector<PathCount>& counts)
{
    std::string out;
    for (const auto& c : counts)
        out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", c.path, count_of(c.tasks, "task"));
    return out;
}

std::string header(const RunAudit& audit)
{
    const auto& c = audit.counts;
    if (c.audited == 0)
        return audit.no_recorder.empty() ? "Sandbox audit: no task was audited\n"
                                         : "Sandbox audit: no task was audited: " + audit.no_recorder + "\n";
    const char* declare = c.audited == 1 ? "it declares" : "they declare";
    if (c.went_beyond == 0)
        return fmt::format("Sandbox audit: {} kept to what {}\n", count_of(c.audited, "task"), declare);
    return fmt::format("Sandbox audit: {} of {} went beyond what {}\n", c.went_beyond, count_of(c.audited, "task"),
                       declare);
}

void run_wide_top(std::string& out, const RunAudit& audit)
{
    if (!audit.manifest_reads.empty()) {
        auto readers = std::count_if(audit.tasks.begin(), audit.tasks.end(), [](const TaskAudit& t) {
            return t.status == TaskStatus::audited && !t.findings.manifest_reads.empty();
        });
        const auto n = audit.manifest_reads.size();
        out += fmt::format("  {} workspace {} package.json read by {}\n", n, n == 1 ? "package's" : "packages'",
                           count_of(static_cast<std::size_t>(readers), "task"));
    }
    if (!audit.toolchain_reads.empty())
        out += "  version and package managers' configuration read: " + path_counts(audit.toolchain_reads) + "\n";
    if (!audit.read_by_many.empty()) {
        out += "  read by many tasks (declare them as their inputs, or in ignoreReads if they cannot change "
               "the results):\n";
        for (const auto& c : audit.read_by_many)
            out += fmt::format("    {} ({}){}\n", c.path, count_of(c.tasks, "task"),
                               c.tsconfig ? ": TypeScript configuration, likely an input" : "");
    }
    if (!audit.packages_read_by_many.empty()) {
        out += "  installed packages read by many tasks, which the sandbox allows, but not in their keys:\n";
        for (const auto& c : audit.packages_read_by_many)
            out += fmt::format("    {} ({})\n", c.path, count_of(c.tasks, "task"));
    }
}

// `paths` less those in `shown`, in their order.
std::vector<std::string> minus(const std::vector<std::string>& paths, const std::set<std::string>& shown)
{
    std::vector<std::string> out;
    std::copy_if(paths.begin(), paths.end(), std::back_inserter(out),
                 [&shown](const std::string& p) { return !shown.count(p); });
    return out;
}

void path_list(std::string& out, const std::string& heading, const std::vector<std::string>& paths)
{
    out += "    " + heading + "\n";
    for (const auto& p : paths)
        out += "      " + p + "\n";
}

// The installed packages a task read outside its key, less those listed at the top: enforce allows
// them, so they are said apart from what it did beyond its declarations.
std::string package_lines(const TaskFindings& f, const std::set<std::string>& many)
{
    std::string out;
    if (auto unkeyed = minus(f.unkeyed_packages, many); !unkeyed.empty()) {
        bool one = unkeyed.size() == 1;
        std::string heading = fmt::format("{} read, which the sandbox allows, but not in its key; name {} in its "
                                          "externalDependencies:",
                                          count_of(unkeyed.size(), "installed package"), one ? "it" : "them");
        path_list(out, heading, unkeyed);
    }
    if (auto hoisted = minus(f.hoisted_packages, many); !hoisted.empty()) {
        bool one = hoisted.size() == 1;
        std::string heading = fmt::format(
            "{} read that nothing its importers install depends on, which the sandbox allows, found through "
            "pnpm's hoisting; declare {} of the {} importing {}:",
            count_of(hoisted.size(), "installed package"), one ? "it as a dependency" : "them as dependencies",
            one ? "package" : "packages", one ? "it" : "them");
        path_list(out, heading, hoisted);
    }
    return out;
}

void task_lines(std::string& out, const TaskAudit& task, const std::set<std::string>& read_by_many,
                const std::string& packages)
{
    const TaskFindings& f = task.findings;
    out += "  " + task.task + "\n";
    bool listed = false;
    if (auto reads = minus(f.reads_outside_inputs, read_by_many); !reads.empty()) {
        path_list(out, count_of(reads.size(), "read") + " outside its inputs:", reads);
        listed = true;
    }
    if (auto tsconfig = minus(f.tsconfig_reads, read_by_many); !tsconfig.empty()) {
        path_list(out,
                  tsconfig.size() == 1
                      ? "1 TypeScript configuration read outside its inputs, likely an input:"
                      : fmt::format("{} TypeScript configurations read outside its inputs, likely inputs:",
                                    tsconfig.size()),
                  tsconfig);
        listed = true;
    }
    // What it wrote in .git (git_writes) is counted once at the end, as enforce allows it.
    if (const auto& writes = f.stray_writes; !writes.empty()) {
        // A directory it created is one line with a count: the JSON keeps every path.
        std::vector<std::string> lines;
        for (const std::string& g : audit::group_created(f)) {
            if (!g.ends_with('/')) {
                lines.push_back(g);
                continue;
            }
            std::size_t n = std::count_if(writes.begin(), writes.end(),
                                          [&g](const std::string& p) { return p.starts_with(g); });
            lines.push_back(fmt::format("{} ({}, in a directory it created)", g, count_of(n, "file")));
        }
        path_list(out, fmt::format("{} written outside its outputs:", writes.size()), lines);
        listed = true;
    }
    if (const auto& temp = f.temporary_files; !temp.empty()) {
        path_list(out,
                  fmt::format("{} temporary file{} outside its outputs, created and removed again (not counted):",
                              temp.size(), temp.size() == 1 ? "" : "s"),
                  temp);
        listed = true;
    }
    std::string projects;
    for (const auto& [project, paths] : f.dependency_reads)
        if (!paths.empty())
            projects += fmt::format("{}{} ({})", projects.empty() ? "" : ", ", project, count_of(paths.size(), "file"));
    if (!projects.empty()) {
        out += "    read in projects it depends on: " + projects + "\n";
        listed = true;
    }
    out += packages;
    // Without this line a task name would stand alone, as if it had nothing to say.
    if (!listed && packages.empty())
        out += "    only reads counted above\n";
    // What to declare, in the target's terms, for what is listed here: what many tasks read is said once
    // at the top, and installed packages' headings say theirs.
    // A TypeScript configuration is declared as any other read: one line for both.
    TaskAudit listed_here = task;
    listed_here.findings.reads_outside_inputs = minus(f.reads_outside_inputs, read_by_many);
    for (std::string& p : minus(f.tsconfig_reads, read_by_many))
        listed_here.findings.reads_outside_inputs.push_back(std::move(p));
    listed_here.findings.tsconfig_reads.clear();
    std::string declare;
    for (const audit::Suggestion& s : audit::suggest(listed_here))
        if (s.declare != "externalDependencies" && s.declare != "packageExtensions")
            declare += "      " + audit::suggestion_line(s) + "\n";
    if (!declare.empty())
        out += "    what to declare in its target:\n" + declare;
}

// "  2 tasks not audited:" and a line per task with why.
void status_block(std::string& out, const RunAudit& audit, TaskStatus status, std::size_t n, const char* what)
{
    if (n == 0)
        return;
    out += fmt::format("  {} {}:\n", count_of(n, "task"), what);
    for (const auto& t : audit.tasks)
        if (t.status == status)
            out += "    " + t.task + (t.reason.empty() ? "" : ": " + t.reason) + "\n";
}

void closing(std::string& out, const RunAudit& audit)
{
    const auto& c = audit.counts;
    if (!audit.unkeyed_reads.empty())
        out += "  read, which the sandbox allows, but not in their keys: " + path_counts(audit.unkeyed_reads) + "\n";
    if (audit.git_writers)
        out += fmt::format("  {} wrote in .git, which the sandbox allows\n", count_of(audit.git_writers, "task"));
    if (c.restored)
        out += fmt::format("  {} restored from the cache, so not audited\n", count_of(c.restored, "task"));
    // When no recorder works, the header already said why nothing was audited.
    if (audit.no_recorder.empty() || c.audited != 0)
        status_block(out, audit, TaskStatus::not_audited, c.not_audited, "not audited");
    status_block(out, audit, TaskStatus::unsandboxed, c.unsandboxed, "ran unsandboxed");
    status_block(out, audit, TaskStatus::refused, c.refused, "refused");
}

// Under enforce: which tasks had what their declarations refuse, refused or not kept, each listed.
std::string enforce_summary(const RunAudit& audit)
{
    const auto& c = audit.counts;
    std::string out;
    if (c.enforced == 0)
        out = "Sandbox enforce: no task ran confined\n";
    else if (c.went_beyond == 0)
        out = fmt::format("Sandbox enforce: {} kept to what {}\n", count_of(c.enforced, "task"),
                          c.enforced == 1 ? "it declares" : "they declare");
    else
        out = fmt::format("Sandbox enforce: {} of {} did what {} refuse\n", c.went_beyond,
                          count_of(c.enforced, "task"), c.enforced == 1 ? "its declarations" : "their declarations");
    if (!audit.landlock_only.empty())
        out += "  held by Landlock alone: " + audit.landlock_only + "\n";
    for (const auto& t : audit.tasks) {
        if (t.status != TaskStatus::enforced || !t.findings.went_beyond())
            continue;
        const TaskFindings& f = t.findings;
        out += "  " + t.task + "\n";
        if (!f.refused_reads.empty())
            path_list(out, fmt::format("{} refused; declare {} as {}:",
                                       count_of(f.refused_reads.size(), "read"),
                                       f.refused_reads.size() == 1 ? "it" : "them",
                                       f.refused_reads.size() == 1 ? "an input" : "inputs"),
                      f.refused_reads);
        if (!f.refused_writes.empty())
            path_list(out, fmt::format("{} outside its outputs refused:", count_of(f.refused_writes.size(), "write")),
                      f.refused_writes);
        if (!f.discarded_writes.empty())
            path_list(out, fmt::format("{} written outside its outputs, not kept:", f.discarded_writes.size()),
                      f.discarded_writes);
    }
    if (!audit.recorder && c.enforced != 0)
        out += "  reads refused are not listed: " +
               (audit.no_recorder.empty() ? std::string("no recorder works here") : audit.no_recorder) + "\n";
    if (audit.stale_sandboxes)
        out += fmt::format("  removed {} sandbox {} left by an interrupted run\n", audit.stale_sandboxes,
                           audit.stale_sandboxes == 1 ? "directory" : "directories");
    if (c.restored)
        out += fmt::format("  {} restored from the cache, so not checked\n", count_of(c.restored, "task"));
    status_block(out, audit, TaskStatus::unsandboxed, c.unsandboxed, "ran unsandboxed");
    status_block(out, audit, TaskStatus::refused, c.refused, "refused");
    return out;
}

}  // namespace

std::string sandbox_summary(const RunAudit& audit)
{
    if (audit.mode == "enforce")
        return enforce_summary(audit);
    std::string out = header(audit);
    run_wide_top(out, audit);
    std::set<std::string> many, many_packages;
    for (const auto& c : audit.read_by_many)
        many.insert(c.path);
    for (const auto& c : audit.packages_read_by_many)
        many_packages.insert(c.path);
    for (const auto& t : audit.tasks) {
        if (t.status != TaskStatus::audited)
            continue;
        std::string packages = package_lines(t.findings, many_packages);
        if (t.findings.went_beyond() || !packages.empty())
            task_lines(out, t, many, packages);
    }
    closing(out, audit);
    return out;
}

}  // namespace qk::report
