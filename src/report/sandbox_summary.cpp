// The closing summary of a sandboxed run: what each task did beyond its declarations, with what many
// tasks share, and what enforce allows, said once rather than per task. It reads as well at 40 tasks
// as at 2: a task with nothing of its own to say is one name on one line, and every count of tasks names
// them.
#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "qk/report/sandbox_summary.hpp"

#include "qk/audit/finding_kinds.hpp"
#include "qk/audit/suggestions.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/printable.hpp"
#include "summary_lines.hpp"

namespace qk::report {

using audit::PathCount;
using audit::RunAudit;
using audit::TaskAudit;
using audit::TaskFindings;
using audit::TaskStatus;

using namespace summary;

namespace {

// "3 tasks: a:build, b:build, c:build"
std::string tasks_named(const std::vector<std::string>& ids)
{
    return count_of(ids.size(), "task") + ": " + named(ids);
}

// ".npmrc (3 tasks: a:build, b:build, c:build), .nvmrc (1 task: a:build)"
std::string path_counts(const std::vector<PathCount>& counts)
{
    std::string out;
    for (const auto& c : counts)
        out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", printable(c.path), tasks_named(c.task_ids));
    return out;
}

std::vector<std::string> ids_with(const RunAudit& audit, bool (*has)(const TaskAudit&))
{
    std::vector<std::string> out;
    for (const TaskAudit& t : audit.tasks)
        if (has(t))
            out.push_back(t.task);
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

// The nx.json change for what many tasks read, as lines to paste, each with what to know before.
void shared_advice(std::string& out, const RunAudit& audit)
{
    auto suggestions = audit::suggest_shared(audit);
    if (suggestions.empty())
        return;
    out += "  what to declare once, in nx.json, rather than in each target:\n";
    for (const audit::SharedSuggestion& s : suggestions) {
        std::string quoted;  // every value: it is said once, as JSON to paste
        for (const std::string& v : s.values)
            quoted += fmt::format("{}\"{}\"", quoted.empty() ? "" : ", ", printable_json(v));
        if (!s.prefer_ignore.empty()) {
            std::string per_target;
            for (const std::string& t : s.targets)
                per_target += fmt::format("{}\"{}\": {{\"qk:ultracache\": {{\"ignoreReads\": [{}]}}}}",
                                          per_target.empty() ? "" : ", ", printable_json(t), quoted);
            out += fmt::format("    \"targetDefaults\": {{{}}}\n", per_target);
            out += fmt::format("      {}; if {} can change the results, add {} to \"{}\" instead\n",
                               printable(s.prefer_ignore),  // it names the file
                               s.values.size() == 1 ? "it" : "they", s.values.size() == 1 ? "it" : "them",
                               s.named_input);
            continue;
        }
        out += fmt::format("    \"namedInputs\": {{\"{}\": [{}]}}\n", s.named_input, quoted);
        out += fmt::format("      with \"{0}\" in \"default\" (\"default\": [\"{{projectRoot}}/**/*\", \"{0}\"]), "
                           "and in the inputs of targets that name theirs without it\n",
                           s.named_input);
        std::vector<std::string> held;  // by effect: never to ignore
        for (const std::string& v : s.values)
            if (std::find(s.or_ignore.begin(), s.or_ignore.end(), v) == s.or_ignore.end())
                held.push_back(printable(v.substr(v.find('/') + 1)));
        if (s.or_ignore.empty())
            continue;
        out += "      what cannot change the results may go in qk:ultracache.ignoreReads (in targetDefaults) instead";
        out += held.empty() ? "\n"
                            : fmt::format(", but not {}: the key holds {} only by what {} change{}\n",
                                          fmt::join(held, ", "), held.size() == 1 ? "it" : "them",
                                          held.size() == 1 ? "it" : "they", held.size() == 1 ? "s" : "");
    }
}

void run_wide_top(std::string& out, const RunAudit& audit)
{
    if (!audit.manifest_reads.empty()) {
        auto readers = ids_with(audit, [](const TaskAudit& t) {
            return t.status == TaskStatus::audited && !t.findings.manifest_reads.empty();
        });
        const auto n = audit.manifest_reads.size();
        out += fmt::format("  {} workspace {} package.json read by {}\n", n, n == 1 ? "package's" : "packages'",
                           tasks_named(readers));
    }
    if (!audit.toolchain_reads.empty())
        out += "  version and package managers' configuration read: " + path_counts(audit.toolchain_reads) + "\n";
    bool heading = false;
    for (const audit::SharedRead& r : audit.shared_reads) {
        if (r.toolchain || r.manifest)
            continue;  // said on the lines above
        if (!heading)
            out += "  read by many tasks:\n";
        heading = true;
        std::string what = r.files > 1 ? fmt::format("{}, {}", count_of(r.files, "file"), tasks_named(r.task_ids))
                                       : tasks_named(r.task_ids);
        // A glob of siblings is likely a tool finding paths (its advice says so), a single file an input.
        const char* tsconfig = !r.tsconfig ? ""
                               : audit::prefer_ignore_for(r.path).empty()
                                   ? ": TypeScript configuration, likely an input"
                                   : ": TypeScript configuration";
        out += fmt::format("    {} ({}){}\n", printable(r.path), what, tsconfig);
    }
    shared_advice(out, audit);
    if (!audit.packages_read_by_many.empty()) {
        out += "  installed packages read by many tasks, which the sandbox allows, but not in their keys:\n";
        for (const auto& c : audit.packages_read_by_many)
            out += fmt::format("    {} ({})\n", printable(c.path), tasks_named(c.task_ids));
    }
}

// `paths` less those the run declares once for many tasks, in their order.
std::vector<std::string> own(const std::vector<std::string>& paths, const RunAudit& audit)
{
    std::vector<std::string> out;
    std::copy_if(paths.begin(), paths.end(), std::back_inserter(out),
                 [&audit](const std::string& p) { return !audit.shared(p); });
    return out;
}

// `names` less those in `shown`, in their order.
std::vector<std::string> minus(const std::vector<std::string>& names, const std::set<std::string>& shown)
{
    std::vector<std::string> out;
    std::copy_if(names.begin(), names.end(), std::back_inserter(out),
                 [&shown](const std::string& p) { return !shown.count(p); });
    return out;
}

// Reads as lines: the same file read in many sibling directories is one glob with how many.
std::vector<std::string> read_lines(const std::vector<std::string>& paths)
{
    std::vector<std::string> out;
    for (const audit::SiblingGroup& g : audit::fold_siblings(paths))
        out.push_back(g.files.size() == 1
                          ? path_line(g.glob)
                          : fmt::format("{} ({})", printable(g.glob), count_of(g.files.size(), "file")));
    return out;
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
    std::vector<std::string> hoisted, types;  // tsc loads @types with no import: no importer to declare it
    for (std::string& name : minus(f.hoisted_packages, many))
        (name.starts_with("@types/") ? types : hoisted).push_back(std::move(name));
    if (!types.empty()) {
        bool one = types.size() == 1;
        std::string heading = fmt::format(
            "{} read through pnpm's hoisting, which the sandbox allows: tsc loads every package in "
            "node_modules/@types with no import, so no package imports {}; name the types the project uses in its "
            "tsconfig's compilerOptions.types, or {} to its devDependencies:",
            count_of(types.size(), "installed @types package"), one ? "it" : "them", one ? "add it" : "add them");
        path_list(out, heading, types);
    }
    if (!hoisted.empty()) {
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

// Its writes outside its outputs, a directory it created as one line with a count: the JSON keeps every
// path.
std::vector<std::string> write_lines(const TaskFindings& f)
{
    std::vector<std::string> lines;
    for (const std::string& g : audit::group_created(f)) {
        if (!g.ends_with('/')) {
            lines.push_back(path_line(g));
            continue;
        }
        std::string_view dir = std::string_view(g).substr(0, g.size() - 1);
        std::size_t n = std::count_if(f.stray_writes.begin(), f.stray_writes.end(),
                                      [dir](const std::string& p) { return is_under(p, dir); });
        lines.push_back(fmt::format("{} ({}, in a directory it created)", printable(g), count_of(n, "file")));
    }
    return lines;
}

// The lines of one kind under its task, as its row says (SummaryAs).
void kind_lines(std::string& out, const audit::FindingKind& kind, const TaskAudit& task, const RunAudit& audit)
{
    const TaskFindings& f = task.findings;
    switch (kind.summary) {
    case audit::SummaryAs::reads:
        if (auto reads = own(f.*kind.list, audit); !reads.empty())
            line_list(out, said(kind.list, reads.size()) + ":", read_lines(reads));
        return;
    case audit::SummaryAs::likely_inputs:
        if (auto reads = own(f.*kind.list, audit); !reads.empty()) {
            auto lines = read_lines(reads);
            // A glob of siblings is likely a tool finding paths, not an input: its advice below says so.
            bool siblings = lines.size() < reads.size();
            std::string heading = fmt::format("{}{}", said(kind.list, reads.size()),
                                              siblings            ? ":"
                                              : reads.size() == 1 ? ", likely an input:"
                                                                  : ", likely inputs:");
            line_list(out, heading, lines);
        }
        return;
    case audit::SummaryAs::writes:
        // What it wrote in .git (strayWrites' `also`) is counted once at the end, as enforce allows it.
        if (!(f.*kind.list).empty())
            line_list(out, said(kind.list, (f.*kind.list).size()) + ":", write_lines(f));
        return;
    case audit::SummaryAs::projects: {
        std::string projects;
        for (const auto& [project, paths] : f.dependency_reads)
            if (!paths.empty())
                projects += fmt::format("{}{} ({})", projects.empty() ? "" : ", ", printable(project),
                                        count_of(paths.size(), "file"));
        if (!projects.empty())
            out += fmt::format("    {}: {}\n", kind.words, projects);
        return;
    }
    case audit::SummaryAs::apart: return;
    }
}

// What it did that is its own to say (not what the run says once at the top), kind by kind in the table's
// order, what it read first: empty when nothing.
std::string own_lines(const TaskAudit& task, const RunAudit& audit)
{
    std::string out;
    auto read = [](const audit::FindingKind& k) {
        return k.summary == audit::SummaryAs::reads || k.summary == audit::SummaryAs::likely_inputs;
    };
    for (bool reads : {true, false})
        for (const audit::FindingKind& k : audit::finding_kinds())
            if (read(k) == reads)
                kind_lines(out, k, task, audit);
    return out;
}

// How many of the files it read the run declares once for many tasks.
std::size_t shared_count(const TaskFindings& f, const RunAudit& audit)
{
    std::size_t n = 0;
    for (const auto* list : {&f.reads_outside_inputs, &f.tsconfig_reads, &f.toolchain_reads})
        n += std::count_if(list->begin(), list->end(), [&audit](const std::string& p) { return audit.shared(p); });
    return n;
}

void task_lines(std::string& out, const TaskAudit& task, const RunAudit& audit, const std::string& own,
                const std::string& packages, const SummaryOptions& options)
{
    const TaskFindings& f = task.findings;
    out += "  " + printable(task.task) + "\n" + own;
    if (const auto& temp = f.temporary_files; !temp.empty())
        path_list(out, said(&TaskFindings::temporary_files, temp.size()) + " (not counted):", temp);
    out += packages;
    out += declare_lines(task, &audit);
    if (std::size_t n = shared_count(f, audit))
        out += fmt::format("    and {} many tasks read: in nx.json, above\n", count_of(n, "file"));
    if (options.processes)
        process_lines(out, task);
}

void closing(std::string& out, const RunAudit& audit)
{
    const auto& c = audit.counts;
    if (!audit.unkeyed_reads.empty())
        out += "  read, which the sandbox allows, but not in their keys: " + path_counts(audit.unkeyed_reads) + "\n";
    open_network_lines(out, audit);
    if (audit.git_writers) {
        auto writers = ids_with(audit, [](const TaskAudit& t) {
            return t.status == TaskStatus::audited && !t.findings.git_writes.empty();
        });
        out += fmt::format("  {} wrote in .git, which the sandbox allows: {}\n", count_of(writers.size(), "task"),
                           named(writers));
    }
    std::vector<std::string> narrower;
    for (const TaskAudit& t : audit.tasks)
        if (!t.inputs_never_read.empty())
            narrower.push_back(fmt::format("{} ({})", printable(t.task), count_of(t.inputs_never_read.size(), "file")));
    if (!narrower.empty())
        out += fmt::format("  declared inputs no recorded run read, which its key could leave out (inputsNeverRead in "
                           "--sandbox-report): {}\n",
                           fmt::join(narrower, ", "));
    restored_line(out, audit, "audited");
    // When no recorder works, the header already said why nothing was audited.
    if (audit.no_recorder.empty() || c.audited != 0)
        status_block(out, audit, TaskStatus::not_audited, c.not_audited, "not audited");
    status_block(out, audit, TaskStatus::unsandboxed, c.unsandboxed, "ran unsandboxed");
    status_block(out, audit, TaskStatus::refused, c.refused, "refused");
}

}  // namespace

namespace summary {

// "3 reads outside its inputs": a kind counted in the words of audit::finding_kinds(), which the page says too.
std::string said(std::vector<std::string> TaskFindings::*list, std::size_t n)
{
    return audit::finding_count(audit::finding_kind(list), n);
}

// "1 task", "2 tasks"
std::string count_of(std::size_t n, const char* noun)
{
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// "app:build, app:test, lib:build and 37 more": up to four named, else the first three.
std::string named(const std::vector<std::string>& ids)
{
    constexpr std::size_t kShown = 3;
    const bool all = ids.size() <= kShown + 1;
    std::vector<std::string> shown(ids.begin(), all ? ids.end() : ids.begin() + kShown);
    if (all)
        return printable_join(shown, ", ");
    return fmt::format("{} and {} more", printable_join(shown, ", "), ids.size() - kShown);
}

// A path as a line of the summary: a name made for one run says it is nothing to declare.
std::string path_line(const std::string& path)
{
    return audit::temporary_name(path) ? printable(path) + " (named for this run: a temporary file, nothing to declare)"
                                       : printable(path);
}

void process_lines(std::string& out, const TaskAudit& task)
{
    if (task.findings.processes.empty())
        return;
    out += "    by process:\n";
    for (const auto& [path, chain] : task.findings.processes)
        out += fmt::format("      {}\n        {}\n", printable(path), process_chain_text(chain));
}

void path_list(std::string& out, const std::string& heading, const std::vector<std::string>& paths)
{
    out += "    " + heading + "\n";
    for (const auto& p : paths)
        out += "      " + printable(p) + "\n";
}

void line_list(std::string& out, const std::string& heading, const std::vector<std::string>& lines)
{
    out += "    " + heading + "\n";
    for (const auto& l : lines)
        out += "      " + l + "\n";
}

// What to declare in its target, for what is listed here, one line per kind: what many tasks read is
// said once at the top, and installed packages' headings say theirs.
std::string declare_lines(const TaskAudit& task, const RunAudit* audit)
{
    // A TypeScript configuration is declared as any other read: one line for both.
    TaskAudit listed_here = task;
    auto& f = listed_here.findings;
    f.reads_outside_inputs.insert(f.reads_outside_inputs.end(), f.tsconfig_reads.begin(), f.tsconfig_reads.end());
    std::sort(f.reads_outside_inputs.begin(), f.reads_outside_inputs.end());
    f.tsconfig_reads.clear();
    std::string declare;
    for (const audit::Suggestion& s : audit::suggest(listed_here, audit))
        if (s.declare != "externalDependencies" && s.declare != "packageExtensions")
            declare += "      " + audit::suggestion_line(s) + "\n";
    return declare.empty() ? "" : "    what to declare in its target:\n" + declare;
}

// "  2 tasks not audited:" and a line per task with why.
void status_block(std::string& out, const RunAudit& audit, TaskStatus status, std::size_t n, const char* what)
{
    if (n == 0)
        return;
    out += fmt::format("  {} {}:\n", count_of(n, "task"), what);
    for (const auto& t : audit.tasks)
        if (t.status == status)
            out += "    " + printable(t.task) + (t.reason.empty() ? "" : ": " + printable(t.reason)) + "\n";
}

void restored_line(std::string& out, const RunAudit& audit, const char* checked)
{
    auto restored = ids_with(audit, [](const TaskAudit& t) { return t.status == TaskStatus::restored; });
    if (!restored.empty())
        out += fmt::format("  {} restored from the cache, so not {}: {}\n", count_of(restored.size(), "task"), checked,
                           named(restored));
    auto remote = ids_with(audit, [](const TaskAudit& t) { return t.from_remote_cache; });
    if (!remote.empty())
        out += fmt::format("  {} restored from the remote cache, {} where {} ran: {}\n", count_of(remote.size(), "task"),
                           checked, remote.size() == 1 ? "it" : "they", named(remote));
}

}  // namespace summary

std::string process_chain_text(const std::vector<std::string>& chain)
{
    std::string out;
    for (std::size_t i = 0; i < chain.size(); ++i)
        out += (i ? " <- " : "by ") + printable(chain[i]);
    return out;
}

std::string sandbox_summary(const RunAudit& audit, const SummaryOptions& options)
{
    if (audit.mode == "enforce")
        return summary::enforce_summary(audit, options);
    std::string out = header(audit);
    run_wide_top(out, audit);
    std::set<std::string> many_packages;
    for (const auto& c : audit.packages_read_by_many)
        many_packages.insert(c.path);
    // A task that went beyond only by what is said above is one name on one line, not a block each.
    std::vector<std::string> only_above;
    for (const auto& t : audit.tasks) {
        if (t.status != TaskStatus::audited)
            continue;
        std::string packages = package_lines(t.findings, many_packages);
        std::string mine = own_lines(t, audit) + summary::undeclared_network_lines(t.findings);
        if (!mine.empty() || !packages.empty())
            task_lines(out, t, audit, mine, packages, options);
        else if (t.findings.went_beyond())
            only_above.push_back(t.task);
    }
    if (!only_above.empty())
        out += fmt::format("  {} went beyond only by what is counted above: {}\n", count_of(only_above.size(), "task"),
                           named(only_above));
    closing(out, audit);
    return out;
}

}  // namespace qk::report
