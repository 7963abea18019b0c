// LocalCache::restore: what the outputs name now is removed, then the stored files are copied back (never
// hard-linked: a tool editing an output in place would change the cache), or written from a packed
// entry's archive, each directory on the way opened with O_NOFOLLOW from the workspace root so nothing
// is written through a symbolic link.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cache_copy.hpp"
#include "cache_fs.hpp"
#include "cache_packed.hpp"
#include "fresh_entries.hpp"
#include "qk/key/cache.hpp"

namespace qk::key {

namespace {

using cache_copy::open_failure;
using cache_fs::name_of;
using cache_fs::open_dir_beneath;
using cache_fs::parent_of;

struct DirCloser {
    void operator()(DIR* d) const { ::closedir(d); }
};

// Removes under directory `fd` (at `rel`) what the outputs match. In an output named whole, directories
// go too once emptied; a glob removes only the files it matches.
Status prune(const OutputSet& set, UniqueFd fd, const std::string& rel, bool whole)
{
    std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd.get()));
    if (!dir)
        return sys_error(fmt::format("cannot list {}", rel));
    fd.release();
    const int at = ::dirfd(dir.get());
    // A read-only directory (some tools make them) must be writable to empty it.
    // Best effort: the outputs may match nothing here, and a removal it was needed for says why it failed.
    if (::faccessat(at, ".", W_OK | X_OK, AT_EACCESS) != 0)
        (void)::fchmod(at, 0700);
    while (dirent* e = ::readdir(dir.get())) {
        std::string_view name = e->d_name;
        if (name == "." || name == "..")
            continue;
        std::string child = fmt::format("{}/{}", rel, name);
        struct stat st;
        if (::fstatat(at, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (!S_ISDIR(st.st_mode)) {
            if (set.matches(child) && ::unlinkat(at, e->d_name, 0) != 0 && errno != ENOENT)
                return sys_error(fmt::format("cannot remove {}", child));
            continue;
        }
        if (OutputSet::never_entered(name))
            continue;
        if (set.may_match_under(child)) {
            UniqueFd sub(::openat(at, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!sub.valid())
                return sys_error(fmt::format("cannot open {}", child));
            QK_TRY_STATUS(prune(set, std::move(sub), child, whole));
        }
        // Not empty: it holds something the outputs exclude, which stays.
        if (whole && set.matches(child) && ::unlinkat(at, e->d_name, AT_REMOVEDIR) != 0 && errno != ENOTEMPTY &&
            errno != EEXIST && errno != ENOENT)
            return sys_error(fmt::format("cannot remove {}", child));
    }
    return {};
}

// Removes what the outputs name in the workspace now: the root's own path when it is a file or a link, what
// the outputs match under it when it is a directory.
Status remove_current(int root_fd, const OutputSet& set)
{
    for (const OutputSet::Root& root : set.roots()) {
        // A link standing where a directory of the way should be is refused before anything is removed.
        auto parent = open_dir_beneath(root_fd, root.whole ? parent_of(root.path) : root.path, false);
        if (!parent.fd.valid() && parent.err != ENOENT && parent.err != ENOTDIR)
            return open_failure(root.path, parent);
    }
    for (const OutputSet::Root& root : set.roots()) {
        auto parent = open_dir_beneath(root_fd, parent_of(root.path), false);
        if (!parent.fd.valid())
            continue;  // nothing there
        if (root.path.empty()) {
            QK_TRY_STATUS(prune(set, std::move(parent.fd), "", false));
            continue;
        }
        std::string name(name_of(root.path));
        struct stat st;
        if (::fstatat(parent.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (!S_ISDIR(st.st_mode)) {
            if (set.matches(root.path) && ::unlinkat(parent.fd.get(), name.c_str(), 0) != 0 && errno != ENOENT)
                return sys_error(fmt::format("cannot remove {}", root.path));
            continue;
        }
        UniqueFd fd(::openat(parent.fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!fd.valid())
            return sys_error(fmt::format("cannot open {}", root.path));
        QK_TRY_STATUS(prune(set, std::move(fd), root.path, root.whole));
        if (root.whole && set.matches(root.path) && ::unlinkat(parent.fd.get(), name.c_str(), AT_REMOVEDIR) != 0 &&
            errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
            return sys_error(fmt::format("cannot remove {}", root.path));
    }
    return {};
}

}  // namespace

Status LocalCache::restore(const CacheHit& hit) const
{
    auto fail = [&](const Error& e) {
        return with_message(e, fmt::format("cannot restore {} from the cache: {}", hit.task, e.message));
    };
    auto outputs = OutputSet::compile(hit.outputs);
    if (!outputs)
        return fail(outputs.error());
    // find() checked this, but a CacheHit is plain data: never write where the outputs do not name.
    for (const CachedFile& f : hit.files)
        if (!outputs->contains(f.path))
            return fail(error(fmt::format("{} is not among the outputs {}", f.path, fmt::join(hit.outputs, ", "))));
    const std::string hex = hit.hash.hex();
    UniqueFd entry(::openat(dir_fd_.get(), hex.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat kind;
    if (entry.valid() && ::fstat(entry.get(), &kind) == 0 && S_ISREG(kind.st_mode)) {
        // Imported by this process and still the file it put there: its bytes, checked whole by the import,
        // are written from memory.
        if (auto kept = fresh::take(hex, kind)) {
            if (Status s = remove_current(root_fd_.get(), *outputs); !s)
                return fail(s.error());
            if (Status s = packed::write_out(*kept->archive, hit, root_fd_.get()); !s)
                return fail(s.error());
            return {};
        }
        // A packed entry: read whole and checked first, then read again into the workspace.
        if (Status s = packed::check_whole(entry.get(), hit); !s) {
            remove_entry(hex);
            return fail(error(s.error().message + ", so the entry was removed"));
        }
        if (Status s = remove_current(root_fd_.get(), *outputs); !s)
            return fail(s.error());
        if (Status s = packed::write_out(entry.get(), hit, root_fd_.get()); !s)
            return fail(s.error());
        return {};
    }
    UniqueFd files(entry.valid() ? ::openat(entry.get(), "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                 : -1);
    if (!files.valid())
        return fail(sys_error(fmt::format("cannot open {}/files", (dir_ / hex).string())));
    // Every cached copy checked against the hash stored with it before anything in the workspace is
    // touched: a copy changed since (on disk, by hand) would replace good outputs with bad ones.
    if (Status s = cache_copy::check_copies(files.get(), hit.files); !s) {
        remove_entry(hex);
        return fail(error(s.error().message + ", so the entry was removed"));
    }
    if (Status s = remove_current(root_fd_.get(), *outputs); !s)
        return fail(s.error());
    cache_copy::Restorer restorer(root_fd_.get(), files.get());
    for (const CachedFile& f : hit.files) {
        if (Status s = restorer.put_back(f); !s)
            return fail(s.error());
    }
    return {};
}

}  // namespace qk::key
