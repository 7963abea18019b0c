// A task's findings, normalised and judged, and a run's findings gathered into the counts and
// run-wide views the summary and --sandbox-report show.
#include "qk/audit/findings.hpp"

#include "qk/audit/finding_kinds.hpp"
#include "qk/audit/suggestions.hpp"

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

// Each path with the tasks that read it, in the order the tasks come (sorted, as finish() sorts them).
using Tally = std::map<std::string, std::vector<std::string>>;

std::vector<PathCount> to_counts(const Tally& tally)
{
    std::vector<PathCount> out;
    out.reserve(tally.size());
    for (const auto& [path, tasks] : tally)
        out.push_back({path, tasks.size(), false, tasks});
    return out;  // a std::map iterates sorted, so the paths are too
}

// Whether `path` or a directory holding it is in `written` (sorted).
bool written_at_or_above(const std::vector<std::string>& written, std::string_view path)
{
    for (std::size_t end = path.size(); end != std::string_view::npos && end > 0; end = path.rfind('/', end - 1))
        if (std::binary_search(written.begin(), written.end(), path.substr(0, end)))
            return true;
    return false;
}

// A read of what the task wrote itself: the file, or one in a directory it wrote or created outside its
// outputs (a build reading back dist/cjs/index.cjs from the dist it made). Declaring that output covers
// the read, so the read is no finding of its own, whatever order the recorder saw them in (a file
// renamed into place is written under its new name only after the rename).
void drop_reads_of_writes(TaskFindings& f)
{
    if (f.stray_writes.empty() && f.temporary_files.empty())
        return;
    std::vector<std::string> written = f.stray_writes;
    written.insert(written.end(), f.created_directories.begin(), f.created_directories.end());
    written.insert(written.end(), f.temporary_files.begin(), f.temporary_files.end());
    sort_unique(written);
    for (auto* list : {&f.reads_outside_inputs, &f.tsconfig_reads})
        std::erase_if(*list, [&written](const std::string& p) { return written_at_or_above(written, p); });
}

// The threshold of "many": at least 3 tasks, and at least a quarter (rounded up) of `of`.
bool many(std::size_t n, std::size_t of) { return n >= 3 && n >= (of + 3) / 4; }

// The tasks that read any of `files`, and how many of them that read at least `at_least` each.
std::pair<std::vector<std::string>, std::size_t> readers_of(const Tally& tally, const std::vector<std::string>& files,
                                                           std::size_t at_least)
{
    std::map<std::string, std::size_t> per_task;
    for (const std::string& f : files)
        for (const std::string& t : tally.at(f))
            ++per_task[t];
    std::vector<std::string> tasks;
    std::size_t scanning = 0;
    for (const auto& [t, n] : per_task) {
        tasks.push_back(t);
        scanning += n >= at_least ? 1 : 0;
    }
    return {std::move(tasks), scanning};
}

// What to declare once in nx.json: the reads (and TypeScript configurations read) outside inputs that
// many tasks make, and the toolchain files read at the workspace root or by many. Where many tasks each
// read the same file in many sibling directories (one tool scanning the workspace), their glob; a file
// each task reads in its own directory (pN/own.txt by pN:build) is each task's own input, not shared.
// Never a name made for one run.
std::vector<SharedRead> shared_reads_of(const Tally& reads, const std::set<std::string>& tsconfig,
                                        const Tally& toolchain, const Tally& manifests, std::size_t went_beyond)
{
    constexpr std::size_t kSiblings = 3;
    std::vector<std::string> paths;
    for (const auto& [path, tasks] : reads)
        if (!temporary_name(path))
            paths.push_back(path);
    std::vector<SharedRead> out;
    auto is_tsconfig = [&tsconfig](const std::string& f) { return tsconfig.contains(f); };
    for (const SiblingGroup& g : fold_siblings(paths, kSiblings)) {
        auto [tasks, scanning] = readers_of(reads, g.files, kSiblings);
        if (g.files.size() > 1 && many(scanning, went_beyond)) {
            bool ts = std::any_of(g.files.begin(), g.files.end(), is_tsconfig);
            out.push_back({g.glob, g.files.size(), std::move(tasks), ts, false});
            continue;
        }
        for (const std::string& f : g.files)
            if (const auto& readers = reads.at(f); many(readers.size(), went_beyond))
                out.push_back({f, 1, readers, is_tsconfig(f), false});
    }
    for (const auto& [path, tasks] : toolchain)
        if (!temporary_name(path) && (path.find('/') == std::string::npos || many(tasks.size(), went_beyond)))
            out.push_back({path, 1, tasks, false, true});
    // Workspace packages' package.json are read by the package manager a script runs through (pnpm run
    // lists the workspace): however few tasks read them, siblings are one glob for the run, as is one
    // read by two tasks, folded as deep as they go (examples/*/*/package.json), as the workspace's package
    // globs are. One read by one task alone (resolving a package) stays that task's own.
    std::vector<std::string> manifest_paths;
    for (const auto& [path, tasks] : manifests)
        manifest_paths.push_back(path);
    for (const SiblingGroup& g : fold_siblings_deep(manifest_paths, 2))
        if (auto readers = readers_of(manifests, g.files, 2).first; g.files.size() > 1 || readers.size() > 1)
            out.push_back({g.glob, g.files.size(), std::move(readers), false, false, true});
    std::sort(out.begin(), out.end(), [](const SharedRead& a, const SharedRead& b) { return a.path < b.path; });
    return out;
}
}  // namespace

void TaskFindings::normalise()
{
    for (const FindingKind& kind : finding_kinds())
        for (List list : {kind.list, kind.also})
            if (list)
                sort_unique(this->*list);
    sort_unique(created_directories);  // what strayWrites holds, grouped: no kind of its own
    drop_reads_of_writes(*this);
    for (auto it = dependency_reads.begin(); it != dependency_reads.end();) {
        sort_unique(it->second);
        it = it->second.empty() ? dependency_reads.erase(it) : std::next(it);
    }
}

bool TaskFindings::empty() const
{
    return empty_but({});
}

bool TaskFindings::empty_but(std::initializer_list<List> forgiven) const
{
    return std::none_of(finding_kinds().begin(), finding_kinds().end(), [&](const FindingKind& kind) {
        return kind.held(*this) && std::find(forgiven.begin(), forgiven.end(), kind.list) == forgiven.end();
    });
}

bool TaskFindings::went_beyond() const
{
    return std::any_of(finding_kinds().begin(), finding_kinds().end(),
                       [this](const FindingKind& kind) { return kind.beyond && kind.in(*this); });
}

bool TaskFindings::refused() const
{
    return std::any_of(finding_kinds().begin(), finding_kinds().end(),
                       [this](const FindingKind& kind) { return kind.refusal && kind.in(*this); });
}

bool verified(const TaskAudit& task)
{
    if (task.status != TaskStatus::audited && task.status != TaskStatus::enforced)
        return false;
    if (task.provenance.lost_events != 0)
        return false;
    return std::none_of(finding_kinds().begin(), finding_kinds().end(),
                        [&task](const FindingKind& kind) { return !kind.whole && kind.held(task.findings); });
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
            read_tally[p].push_back(t.task);
        tsconfig_paths.insert(f.tsconfig_reads.begin(), f.tsconfig_reads.end());
        for (const auto& p : f.unkeyed_reads)
            unkeyed_tally[p].push_back(t.task);
        for (const auto& p : f.manifest_reads)
            manifest_tally[p].push_back(t.task);
        for (const auto& p : f.toolchain_reads)
            toolchain_tally[p].push_back(t.task);
        std::vector<std::string> packages;
        std::set_union(f.unkeyed_packages.begin(), f.unkeyed_packages.end(), f.hoisted_packages.begin(),
                       f.hoisted_packages.end(), std::back_inserter(packages));
        for (const auto& p : packages)
            package_tally[p].push_back(t.task);
        package_readers += packages.empty() ? 0 : 1;
    }

    // Three tasks are not many in a run where dozens went beyond: there a path read by a few is more
    // likely each task's own undeclared input than a tool's, so it stays listed with each of them.
    read_by_many.clear();
    for (const auto& [path, tasks] : read_tally)
        if (many(tasks.size(), counts.went_beyond))
            read_by_many.push_back({path, tasks.size(), tsconfig_paths.contains(path), tasks});
    packages_read_by_many.clear();
    for (const auto& [name, tasks] : package_tally)
        if (many(tasks.size(), package_readers))
            packages_read_by_many.push_back({name, tasks.size(), false, tasks});
    unkeyed_reads = to_counts(unkeyed_tally);
    manifest_reads = to_counts(manifest_tally);
    toolchain_reads = to_counts(toolchain_tally);
    shared_reads = shared_reads_of(read_tally, tsconfig_paths, toolchain_tally, manifest_tally, counts.went_beyond);
}

const SharedRead* RunAudit::shared(std::string_view path) const
{
    for (const SharedRead& r : shared_reads)
        if (sibling_match(r.path, path))
            return &r;
    return nullptr;
}

}  // namespace qk::audit
