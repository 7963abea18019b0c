#include "qk/audit/classify.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "qk/audit/hoisted_importers.hpp"
#include "qk/audit/network_findings.hpp"
#include "qk/record/path_resolver.hpp"
#include "qk/util/special_names.hpp"

namespace qk::audit {
namespace {

constexpr std::uint16_t kWrites = record::kWrite | record::kCreate | record::kRemove;

std::string_view parent_of(std::string_view path)
{
    std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos || slash == 0 ? std::string_view("/") : path.substr(0, slash);
}

class Classifier {
public:
    Classifier(const record::Recording& recording, const rules::Rules& rules, const workspace::Workspace& ws)
        : rec_(recording), rules_(rules), ws_(ws)
    {
        for (const auto& [from, to] : rec_.renames())
            renamed_from_.emplace(from, to);
    }


    TaskFindings run()
    {
        for (const auto& [path, access] : rec_.paths()) {
            if (access & kWrites) {
                if (renamed_away(path))
                    continue;  // judged where it went, or as the rename's source below
                judge_write(path, !(access & record::kWrite), temporary(path, access));
            } else if (access & (record::kRead | record::kLinked)) {
                // A hard link's source is read through its new name (`ln secret /tmp/h; cat /tmp/h`).
                judge_read(path);
            }
        }
        for (const auto& [from, to] : rec_.renames()) {
            // The name a file was written under before it was renamed away: gone, as a removed one.
            auto it = rec_.paths().find(from);
            judge_write(from, true, it != rec_.paths().end() && temporary(from, it->second | record::kRemove));
            judge_write(to, true, false);
        }
        out_.hoisted_importers = hoisted_importers(rec_, rules_, hoisted_);
        classify_network(rec_.network(), rules_.network(), out_);
        out_.normalise();
        return std::move(out_);
    }

private:
    // Whether `path`, gone now, was renamed away: itself (the rename's source is judged with the
    // rename), or with a directory it lay in, built beside an output and renamed into place (`mkdir
    // out.tmp && … && mv out.tmp out`), whose files are judged where they are now. Writes are judged by
    // what the task leaves, as enforce judges them.
    // Looked up by the path and each directory above it (a build writing every file atomically renames
    // as many times as it writes: no scan of every rename per path), and only then asked of the disk.
    bool renamed_away(const std::string& path)
    {
        if (renamed_from_.empty())
            return false;
        struct stat st {};
        bool gone_checked = false;
        for (std::size_t end = path.size(); end != 0 && end != std::string::npos; end = path.rfind('/', end - 1)) {
            auto [first, last] = renamed_from_.equal_range(std::string_view(path).substr(0, end));
            if (first == last)
                continue;
            if (!gone_checked) {
                if (::lstat(path.c_str(), &st) == 0)
                    return false;  // there now: judged where it is
                gone_checked = true;
            }
            if (end == path.size())
                return true;  // the rename's source itself, judged with the rename
            for (auto it = first; it != last; ++it) {
                const std::string now = std::string(it->second) + path.substr(end);
                if (::lstat(now.c_str(), &st) != 0)
                    continue;  // gone from there too: judged as it was
                judge_write(now, true, false);
                return true;
            }
        }
        return false;
    }

    // Made by the task and removed again: nothing of it is left. Only a creation the recorder saw counts
    // (strace cannot see one without O_EXCL, so there such a file stays a stray write: a file that was
    // there before and is gone now is a change the task made).
    static bool temporary(const std::string& path, std::uint16_t access)
    {
        struct stat st {};
        return (access & record::kCreate) && (access & record::kRemove) && ::lstat(path.c_str(), &st) != 0;
    }

    void judge_write(const std::string& path, bool create_or_remove, bool temporary)
    {
        rules::Verdict v = rules_.write(path, create_or_remove);
        if (v.finding != rules::Finding::stray_write)
            return;
        if (temporary && !v.allowed()) {
            out_.temporary_files.emplace_back(*rules_.relative(path));
            return;
        }
        if (!v.allowed()) {
            auto it = rec_.paths().find(path);
            struct stat st {};
            if (it != rec_.paths().end() && (it->second & record::kCreate) && ::stat(path.c_str(), &st) == 0 &&
                S_ISDIR(st.st_mode))
                out_.created_directories.emplace_back(*rules_.relative(path));
        }
        // Enforce allows what it writes in .git: listed apart, and counted once at the end.
        (v.allowed() ? out_.git_writes : out_.stray_writes).emplace_back(*rules_.relative(path));
        name_process(path);
    }

    // The process behind a finding's access, and the chain up to the task's command.
    void name_process(const std::string& path)
    {
        if (pid_t pid = rec_.first_pid(path))
            if (auto chain = rec_.command_chain(pid); !chain.empty())
                out_.processes.emplace(std::string(*rules_.relative(path)), std::move(chain));
    }

    std::string package_name(const rules::Verdict& v) const { return rules_.package_name(v.package); }

    void judge_read(const std::string& path)
    {
        rules::Verdict v = rules_.read(path);
        if (v.finding == rules::Finding::none)
            return;
        // Read through a link: judged where it lands. What a declared link leads to is in the key, and so in
        // the rules, where the key holds its content (a directory link an input names: its linked tree; a
        // json input's link: its target); a file link a glob matches is keyed by its text alone, so what it
        // leads to is read outside the inputs, as enforce refuses it.
        std::string rel(*rules_.relative(path));
        if (v.finding != rules::Finding::unkeyed_package && v.finding != rules::Finding::hoisted_package)
            name_process(path);
        switch (v.finding) {
        case rules::Finding::none:
        case rules::Finding::stray_write:
        case rules::Finding::undeclared_network: break;  // a path is never a host
        case rules::Finding::read_outside_inputs: out_.reads_outside_inputs.push_back(std::move(rel)); break;
        case rules::Finding::tsconfig_read: out_.tsconfig_reads.push_back(std::move(rel)); break;
        case rules::Finding::unkeyed_read: out_.unkeyed_reads.push_back(std::move(rel)); break;
        case rules::Finding::manifest_read: out_.manifest_reads.push_back(std::move(rel)); break;
        case rules::Finding::toolchain_read: out_.toolchain_reads.push_back(std::move(rel)); break;
        case rules::Finding::dependency_read:
            out_.dependency_reads[ws_.projects()[v.project].name].push_back(std::move(rel));
            break;
        case rules::Finding::unkeyed_package: out_.unkeyed_packages.push_back(package_name(v)); break;
        case rules::Finding::hoisted_package:
            out_.hoisted_packages.push_back(package_name(v));
            hoisted_.emplace(out_.hoisted_packages.back(), v.package);
            break;
        }
    }

    const record::Recording& rec_;
    const rules::Rules& rules_;
    const workspace::Workspace& ws_;
    std::unordered_multimap<std::string_view, std::string_view> renamed_from_;  // rename source -> destination
    std::map<std::string, std::uint32_t> hoisted_;  // hoisted package read -> its lockfile snapshot
    TaskFindings out_;
};

}  // namespace

TaskFindings classify(const record::Recording& recording, const rules::Rules& rules, const workspace::Workspace& ws)
{
    return Classifier(recording, rules, ws).run();
}

void refused_accesses(const record::Recording& recording, const rules::Rules& rules, const RefusalContext& context,
                      TaskFindings& out)
{
    auto later = [](const struct timespec& a, const struct timespec& b) {
        return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec >= b.tv_nsec;
    };
    // Each refusal with the process refused and the chain up to the task's command, as a finding has.
    auto refuse = [&](std::vector<std::string>& list, std::string_view named, const std::string& path) {
        list.emplace_back(named);
        if (pid_t pid = recording.first_pid(path))
            if (auto chain = recording.command_chain(pid); !chain.empty())
                out.processes.emplace(std::string(named), std::move(chain));
    };
    for (const auto& [path, access] : recording.paths()) {
        if (!(access & (record::kDenied | record::kProbe)))
            continue;
        auto rel = rules.relative(path);
        if (!rel || rel->empty()) {
            // Outside the workspace enforce refuses nothing, and the workspace itself is no file; but a
            // refusal through another process's /proc links or /dev/fd could not be placed, and a task
            // failed on it must still say what it was refused.
            if (record::PathResolver::through_descriptor(path)) {
                if ((access & record::kDenied) || context.failed)
                    refuse(out.refused_unplaced, path, path);
            } else if ((access & record::kDenied) && context.failed && !rel) {
                // Enforce keeps the host's settings and devices (/proc/sys, /sys, /dev) and other
                // sandboxes from a task; a task that failed says what it was refused there, though there
                // is nothing to declare. One that did not fail probed and went on, as tools do.
                refuse(out.refused_outside, path, path);
            }
            continue;
        }
        struct stat st {};
        if (!(access & record::kDenied)) {
            // Over a read mask, what the task may not read is not there: an open or look that found
            // nothing where the workspace has something was refused. Only a task that failed lists them:
            // tools look for files they can do without (pnpm pack for a lockfile), which the audit does
            // not count either.
            if (context.failed && ::lstat(path.c_str(), &st) == 0 && !rules.read(path).allowed())
                refuse(out.refused_reads, *rel, path);
            continue;
        }
        const bool there = ::lstat(path.c_str(), &st) == 0;
        if (!(access & record::kDeniedChange)) {
            // A read. Landlock alone holds the files that were there when its rules were built: one made
            // again since (another task rebuilding what this one reads) is refused though declared.
            if (!rules.read(path).allowed())
                refuse(out.refused_reads, *rel, path);
            else if (context.landlock_only && there && later(st.st_ctim, context.rules_built))
                refuse(out.replaced_reads, *rel, path);
            continue;
        }
        // Held by Landlock alone, a refused change of a path that is not there was one the task tried to
        // create (a file output that was not there as it started included: Landlock alone cannot allow
        // it), and a refused change of what the rules let it write, in a directory it may not write, or
        // of a directory itself, is one Landlock alone cannot allow either: removing an output directory.
        if (special_tree(*rel) == SpecialDir::qk) {
            refuse(out.refused_writes, *rel, path);  // qk's cache, read-only to every task (EROFS over the overlay)
        } else if (special_tree(*rel) == SpecialDir::git && rules.write(path, false).allowed()) {
            // Landlock alone keeps .git's own directory read-only, its configuration in it: git refreshing
            // its index as it reads (git status, git describe --dirty) is refused and goes on as before.
            // Named only where the task failed.
            if (context.failed)
                refuse(out.refused_writes, *rel, path);
        } else if (!context.landlock_only) {
            if (there && !rules.read(path).allowed())
                refuse(out.refused_reads, *rel, path);  // over the overlay only what it may not read is refused
        } else if (!there || S_ISDIR(st.st_mode) || !rules.write(path, false).allowed() ||
                   !rules.write(std::string(parent_of(path)), true).allowed()) {
            refuse(out.refused_writes, *rel, path);
        }
    }
    // Tools probe io_uring and fall back to plain system calls (libuv in every node process): a refused
    // call is a cause worth naming only for a task that failed.
    if (context.failed)
        out.refused_calls.insert(out.refused_calls.end(), recording.refused_calls().begin(),
                                 recording.refused_calls().end());
    refused_network_attempts(recording.network(), rules.network(), out);
    out.normalise();
}

TaskAudit audit_task(std::string task, const record::Recording& recording, const rules::Rules& rules,
                     const workspace::Workspace& ws)
{
    TaskAudit audit;
    audit.task = std::move(task);
    // The project is the longest part before a colon that names one: targets may hold colons.
    for (auto colon = audit.task.rfind(':'); colon != std::string::npos && colon > 0;
         colon = audit.task.rfind(':', colon - 1))
        if (const workspace::Project* p = ws.find_project(std::string_view(audit.task).substr(0, colon))) {
            audit.project_root = p->root;
            audit.project = p->name;
            break;
        }
    if (!recording.complete()) {
        audit.status = TaskStatus::not_audited;
        audit.reason = fmt::format("the recording is incomplete: {}", fmt::join(recording.incomplete_reasons(), "; "));
        return audit;
    }
    audit.status = TaskStatus::audited;
    audit.findings = classify(recording, rules, ws);
    for (const auto& [name, paths] : audit.findings.dependency_reads)
        if (const workspace::Project* p = ws.find_project(name))
            audit.dependency_roots.emplace(name, p->root);
    return audit;
}

}  // namespace qk::audit
