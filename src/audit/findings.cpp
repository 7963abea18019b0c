// A task's findings, normalised and judged, and a run's findings gathered into the counts and
// run-wide views the summary and --sandbox-report show.
#include "qk/audit/findings.hpp"

#include "qk/rules/rules.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <string_view>

namespace qk::audit {

namespace {

void sort_unique(std::vector<std::string>& paths)
{
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
}

// The map may hold a project with no paths when findings were not normalised; such an entry is no
// finding.
bool any_dependency_read(const std::map<std::string, std::vector<std::string>>& reads)
{
    return std::any_of(reads.begin(), reads.end(), [](const auto& entry) { return !entry.second.empty(); });
}

using Tally = std::map<std::string, std::size_t>;

std::vector<PathCount> to_counts(const Tally& tally)
{
    std::vector<PathCount> out;
    out.reserve(tally.size());
    for (const auto& [path, tasks] : tally)
        out.push_back({path, tasks});
    return out;  // a std::map iterates sorted, so the paths are too
}

}  // namespace

void TaskFindings::normalise()
{
    for (auto* list : {&reads_outside_inputs, &tsconfig_reads, &stray_writes, &git_writes, &temporary_files,
                       &created_directories, &unkeyed_reads,
                       &manifest_reads, &toolchain_reads, &unkeyed_packages, &hoisted_packages, &refused_reads,
                       &refused_writes, &discarded_writes})
        sort_unique(*list);
    for (auto it = dependency_reads.begin(); it != dependency_reads.end();) {
        sort_unique(it->second);
        it = it->second.empty() ? dependency_reads.erase(it) : std::next(it);
    }
}

bool TaskFindings::empty() const
{
    return reads_outside_inputs.empty() && tsconfig_reads.empty() && stray_writes.empty() && git_writes.empty() &&
           temporary_files.empty() &&
           unkeyed_reads.empty() &&
           manifest_reads.empty() && toolchain_reads.empty() && !any_dependency_read(dependency_reads) &&
           unkeyed_packages.empty() && hoisted_packages.empty() && refused_reads.empty() && refused_writes.empty() &&
           discarded_writes.empty();
}

bool TaskFindings::went_beyond() const
{
    using rules::Finding;
    // Manifest and toolchain reads are summarised once at the top, but enforce refuses them all the same.
    const std::pair<const std::vector<std::string>*, Finding> lists[] = {
        {&reads_outside_inputs, Finding::read_outside_inputs}, {&tsconfig_reads, Finding::tsconfig_read},
        {&stray_writes, Finding::stray_write},                 {&unkeyed_reads, Finding::unkeyed_read},
        {&manifest_reads, Finding::manifest_read},             {&toolchain_reads, Finding::toolchain_read},
        {&unkeyed_packages, Finding::unkeyed_package},         {&hoisted_packages, Finding::hoisted_package},
    };
    for (const auto& [list, kind] : lists)
        if (!list->empty() && !rules::enforce_allows(kind))
            return true;
    // What enforce refused or did not keep.
    if (!refused_reads.empty() || !refused_writes.empty() || !discarded_writes.empty())
        return true;
    return any_dependency_read(dependency_reads) && !rules::enforce_allows(Finding::dependency_read);
}

const char* status_name(TaskStatus status)
{
    switch (status) {
    case TaskStatus::audited: return "audited";
    case TaskStatus::restored: return "restored";
    case TaskStatus::not_audited: return "notAudited";
    case TaskStatus::unsandboxed: return "unsandboxed";
    case TaskStatus::refused: return "refused";
    case TaskStatus::enforced: return "enforced";
    }
    return "audited";  // unreachable: every enumerator is handled above
}

std::optional<TaskStatus> parse_status(std::string_view name)
{
    for (TaskStatus s : {TaskStatus::audited, TaskStatus::restored, TaskStatus::not_audited, TaskStatus::unsandboxed,
                         TaskStatus::refused, TaskStatus::enforced})
        if (name == status_name(s))
            return s;
    return std::nullopt;
}

void RunAudit::finish()
{
    auto by_id = [](const TaskAudit& a, const TaskAudit& b) { return a.task < b.task; };
    // A merge of shards' reports comes in order already: moving 50,000 tasks through a sort is not free.
    if (!std::is_sorted(tasks.begin(), tasks.end(), by_id))
        std::stable_sort(tasks.begin(), tasks.end(), by_id);

    // Everything below is recomputed, so calling finish() again after adding tasks is safe.
    counts = Counts{};
    counts.tasks = tasks.size();
    git_writers = 0;
    Tally read_tally, unkeyed_tally, manifest_tally, toolchain_tally, package_tally;
    std::set<std::string> tsconfig_paths;
    std::size_t package_readers = 0;
    for (auto& t : tasks) {
        switch (t.status) {
        case TaskStatus::audited: ++counts.audited; break;
        case TaskStatus::restored: ++counts.restored; continue;
        case TaskStatus::not_audited: ++counts.not_audited; continue;
        case TaskStatus::unsandboxed: ++counts.unsandboxed; continue;
        case TaskStatus::refused: ++counts.refused; continue;
        case TaskStatus::enforced: ++counts.enforced; break;
        }
        auto& f = t.findings;
        f.normalise();
        if (f.went_beyond())
            ++counts.went_beyond;
        if (!f.git_writes.empty())
            ++git_writers;
        // A tool reading a path as tsconfig in one task and as a plain read in another is still one
        // path: the union keeps a task from counting twice for it.
        std::vector<std::string> reads;
        std::set_union(f.reads_outside_inputs.begin(), f.reads_outside_inputs.end(), f.tsconfig_reads.begin(),
                       f.tsconfig_reads.end(), std::back_inserter(reads));
        for (const auto& p : reads)
            ++read_tally[p];
        tsconfig_paths.insert(f.tsconfig_reads.begin(), f.tsconfig_reads.end());
        for (const auto& p : f.unkeyed_reads)
            ++unkeyed_tally[p];
        for (const auto& p : f.manifest_reads)
            ++manifest_tally[p];
        for (const auto& p : f.toolchain_reads)
            ++toolchain_tally[p];
        std::vector<std::string> packages;
        std::set_union(f.unkeyed_packages.begin(), f.unkeyed_packages.end(), f.hoisted_packages.begin(),
                       f.hoisted_packages.end(), std::back_inserter(packages));
        for (const auto& p : packages)
            ++package_tally[p];
        package_readers += packages.empty() ? 0 : 1;
    }

    // Three tasks are not many in a run where dozens went beyond: there a path read by a few is more
    // likely each task's own undeclared input than a tool's, so it stays listed with each of them.
    const std::size_t quarter = (counts.went_beyond + 3) / 4;
    read_by_many.clear();
    for (const auto& [path, n] : read_tally)
        if (n >= 3 && n >= quarter)
            read_by_many.push_back({path, n, tsconfig_paths.contains(path)});
    packages_read_by_many.clear();
    for (const auto& [name, n] : package_tally)
        if (n >= 3 && n >= (package_readers + 3) / 4)
            packages_read_by_many.push_back({name, n});
    unkeyed_reads = to_counts(unkeyed_tally);
    manifest_reads = to_counts(manifest_tally);
    toolchain_reads = to_counts(toolchain_tally);
}

}  // namespace qk::audit
