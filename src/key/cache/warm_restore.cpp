// LocalCache::restore_warm: warm state kept with an entry put back where the workspace holds none. Each
// declared warm path is judged by its literal root: absent (put in place), present (kept: what the tool
// left there since is newer than any entry), or behind a symbolic link (left alone, never followed).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "cache_copy.hpp"
#include "cache_fs.hpp"
#include "cache_meta.hpp"
#include "qk/key/cache.hpp"

namespace qk::key {

namespace {

enum class RootState { absent, present, link };

bool lies_under(std::string_view path, std::string_view root)
{
    return root.empty() || path == root || (path.starts_with(root) && path[root.size()] == '/');
}

// A root named whole is there or not; a glob's root holds warm state when any path under it matches.
RootState state_of(int root_fd, const OutputSet::Root& root, const std::vector<OutputFile>* present)
{
    std::string_view dir = root.whole ? cache_fs::parent_of(root.path) : std::string_view(root.path);
    auto opened = cache_fs::open_dir_beneath(root_fd, dir, false);
    if (!opened.fd.valid())
        return opened.err == ELOOP ? RootState::link : opened.err == ENOENT ? RootState::absent : RootState::present;
    if (root.whole) {
        struct stat st;
        std::string name(cache_fs::name_of(root.path));
        if (::fstatat(opened.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return errno == ENOENT ? RootState::absent : RootState::present;
        return S_ISLNK(st.st_mode) ? RootState::link : RootState::present;
    }
    if (!present)
        return RootState::link;  // the walk met a link on the way: nothing is written there
    for (const OutputFile& f : *present)
        if (lies_under(f.path, root.path))
            return RootState::present;
    return RootState::absent;
}

}  // namespace

Result<std::optional<WarmRestored>> LocalCache::restore_warm(const Hash128& hash, const std::string& task,
                                                             const OutputSet& warm, const OutputSet& outputs) const
{
    const std::string hex = hash.hex();
    auto fail = [&](const std::string& why) {
        return error(fmt::format("the warm state of cache entry {}: {}", hex, why));
    };
    UniqueFd entry(::openat(dir_fd_.get(), hex.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!entry.valid())
        return std::optional<WarmRestored>();  // gone since it was named: a cold start
    auto text = cache_fs::read_file_at(entry.get(), "warm.json");
    if (!text) {
        if (text.error().sys_errno == ENOENT)
            return std::optional<WarmRestored>();  // stored without warm state, or imported from a shared cache
        return fail(text.error().message);
    }
    auto doc = cache_meta::read_warm(*text);
    if (!doc)
        return fail(doc.error().message);
    if (doc->task != task)
        return std::optional<WarmRestored>();
    // Where it would write, checked against what the task declares now, however warm.json came to be.
    for (const CachedFile& f : doc->files) {
        if (!warm.contains(f.path))
            return fail(fmt::format("it lists {}, which the task's warm paths do not name now", f.path));
        if (outputs.contains(f.path))
            return fail(fmt::format("it lists {}, which is an output of the task now", f.path));
    }
    UniqueFd copies(::openat(entry.get(), "warm", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!copies.valid())
        return fail(sys_error("cannot open warm/").message);
    if (Status s = cache_copy::check_copies(copies.get(), doc->files); !s)
        return fail(s.error().message);

    // Walked only for a glob, whose root may stand with nothing matched under it.
    std::optional<Result<std::vector<OutputFile>>> present;
    WarmRestored out;
    std::vector<std::pair<std::string, RootState>> states;
    for (const OutputSet::Root& root : warm.roots()) {
        if (!root.whole && !present)
            present = collect_output_files(root_fd_.get(), warm);
        const std::vector<OutputFile>* found = present && *present ? &**present : nullptr;
        RootState st = state_of(root_fd_.get(), root, found);
        states.emplace_back(root.path, st);
        if (st == RootState::present)
            out.kept.push_back(root.path);
        else if (st == RootState::link)
            out.links.push_back(root.path);
    }
    // A path goes back only when every warm path it lies under is absent: none of it is in the workspace.
    cache_copy::Restorer restorer(root_fd_.get(), copies.get());
    for (const CachedFile& f : doc->files) {
        bool under_any = false, all_absent = true;
        for (const auto& [root, st] : states)
            if (lies_under(f.path, root)) {
                under_any = true;
                all_absent = all_absent && st == RootState::absent;
            }
        if (!under_any || !all_absent)
            continue;
        if (Status s = restorer.put_back(f); !s)
            return fail(s.error().message);
        ++out.files;
        for (const auto& [root, st] : states)
            if (lies_under(f.path, root) &&
                std::find(out.restored.begin(), out.restored.end(), root) == out.restored.end())
                out.restored.push_back(root);
    }
    return std::optional<WarmRestored>(std::move(out));
}

}  // namespace qk::key
