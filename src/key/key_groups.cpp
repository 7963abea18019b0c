// Fileset groups, runtime inputs and package sets: the parts of keys that tasks of a run share.
#include <sys/wait.h>

#include <fmt/format.h>

#include "key_parts.hpp"
#include "qk/util/subprocess.hpp"

namespace qk::key {

Result<GroupResult> KeyBuilder::State::group(const std::shared_ptr<const FilesetGroup>& shared)
{
    const FilesetGroup& g = *shared;
    const std::string& cache_key = g.cache_key;
    {
        std::lock_guard l(mutex);
        if (auto it = by_group.find(&g); it != by_group.end())
            return it->second.second;
        if (auto it = groups.find(cache_key); it != groups.end()) {
            by_group.try_emplace(&g, shared, it->second);
            return it->second;
        }
    }
    auto matched = std::make_shared<std::vector<std::uint32_t>>();
    auto consider = [&](std::uint32_t f) {
        if (g.globs.matches(files.files()[f]))
            matched->push_back(f);
    };
    if (g.project) {
        for (std::uint32_t f : files.files_of(*g.project))
            consider(f);
    } else {
        auto [begin, end] = files.range_under(g.globs.literal_prefix());
        for (std::size_t f = begin; f < end; ++f)
            consider(static_cast<std::uint32_t>(f));
    }
    QK_TRY_STATUS(files.hash(*matched));
    Hasher h;
    h.field(std::uint64_t(matched->size()));
    std::vector<LinkedTreeRef> trees;
    for (std::uint32_t f : *matched) {
        h.field(files.files()[f]).field(files.hash_of(f));
        if (files.is_symlink(f)) {
            QK_TRY(tree, linked_tree(f));
            if (*tree)
                trees.push_back({f, std::move(*tree)});
        }
    }
    GroupResult r{std::move(matched), h.digest(), nullptr};
    if (!trees.empty())
        r.trees = std::make_shared<const std::vector<LinkedTreeRef>>(std::move(trees));
    std::lock_guard l(mutex);
    const GroupResult& kept = groups.emplace(cache_key, r).first->second;
    by_group.try_emplace(&g, shared, kept);
    return kept;
}

Result<Hash128> KeyBuilder::State::runtime(const std::string& command)
{
    {
        std::lock_guard l(mutex);
        if (auto it = runtimes.find(command); it != runtimes.end())
            return it->second;
    }
    // Nx runs a runtime input in the workspace root with a shell and hashes what it prints; its stderr
    // is the user's to see.
    CaptureOptions options;
    options.stderr_to = CaptureOptions::Stderr::inherited;
    options.cwd = graph.workspace().root().string();
    auto ran = run_captured({"/bin/sh", "-c", command}, options);
    if (!ran)
        return with_message(ran.error(), fmt::format("runtime input \"{}\": {}", command, ran.error().message));
    const int status = ran->wait_status;
    if (!ran->succeeded())
        return error(fmt::format("runtime input \"{}\" failed (exit status {}); the key needs its output",
                                 command, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
    Hash128 h = hash_bytes(ran->out);
    std::lock_guard l(mutex);
    return runtimes.emplace(command, h).first->second;
}

Result<KeyPackages> KeyBuilder::State::packages(const workspace::Task& task, const InputPlan& plan)
{
    KeyPackages out;
    if (!lock)
        return out;
    out.lockfile = lock_path;
    const workspace::Project& project = graph.workspace().projects()[task.project];
    std::string cache_key;
    if (plan.external_dependencies) {
        out.source = KeyPackages::Source::named;
        out.names = *plan.external_dependencies;
        cache_key = "named";
        for (const std::string& n : out.names)
            cache_key += "\n" + n;
    } else {
        // A task that names no external dependencies counts what its project and the root install.
        out.source = KeyPackages::Source::importers;
        if (project.root != "." && lock->find_importer(project.root))
            out.importers.push_back(project.root);
        if (lock->find_importer("."))
            out.importers.push_back(".");
        cache_key = "importers";
        for (const std::string& i : out.importers)
            cache_key += "\n" + i;
    }
    {
        std::lock_guard l(mutex);
        if (auto it = package_sets.find(cache_key); it != package_sets.end())
            return it->second;
    }
    auto closure = out.source == KeyPackages::Source::named ? workspace::package_closure(*lock, out.names)
                                                             : workspace::importer_closure(*lock, out.importers);
    if (!closure)
        return error(fmt::format("{}: {}", lock_path, closure.error().message));
    out.hash = hash_bytes(workspace::pnpm_key_text(*lock, *closure));
    out.closure = std::make_shared<const workspace::PnpmClosure>(std::move(*closure));
    std::lock_guard l(mutex);
    return package_sets.emplace(cache_key, out).first->second;
}

}  // namespace qk::key
