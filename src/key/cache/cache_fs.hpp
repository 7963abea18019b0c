// File system steps the cache and the output walk share: opening a directory beneath another without
// ever following a symbolic link, copying a file's data (reflink when it can, holes kept), removing a tree.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qk/util/path_parts.hpp"
#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::key::cache_fs {

// "a/b/c" -> "a/b"; "c" -> "": util's, named here for the steps below.
using qk::name_of;
using qk::parent_of;

// The error for a symbolic link found at `link` on the way to `output`: outputs are never read or written
// through one.
Error link_on_the_way(std::string_view output, std::string_view link);

// The result of opening `path` (relative, "" for `base` itself) one component at a time with O_NOFOLLOW.
// On failure `fd` is invalid, `err` is ENOENT (a component is missing), ENOTDIR (one is not a directory),
// ELOOP (one is a symbolic link) or another errno, and `at` is the prefix of `path` that failed.
struct OpenedDir {
    UniqueFd fd;
    int err = 0;
    std::string at;
};
// With `create`, missing components are made (mode 0777 less the umask).
OpenedDir open_dir_beneath(int base, std::string_view path, bool create);

// open_dir_beneath() for a run of paths, keeping the last directory open while consecutive paths share it
// (a sorted list of files mostly does).
class DirCursor {
public:
    DirCursor(int base, bool create) : base_(base), create_(create) {}
    const OpenedDir& open(std::string_view dir);

private:
    int base_;
    bool create_;
    bool opened_ = false;
    std::string path_;
    OpenedDir current_;
};

// Copies the whole of `src` into `dst` (an empty regular file): a reflink (FICLONE) where the file system
// shares extents, else its data alone, holes kept as holes (copy_sparse). `what` names the copy in messages.
Status copy_data(int src, int dst, std::string_view what);

// Removes `name` in `dirfd`, and when it is a directory everything under it, never following a link.
// ENOENT is success. `display` names it in messages.
Status remove_tree(int dirfd, const std::string& name, std::string_view display);

// A directory (or a packed entry's file) in .qk/cache/tmp where an entry is built, removed unless it was
// renamed into place.
class BuildDir {
public:
    BuildDir(int cache_fd, std::string name) : cache_fd_(cache_fd), name_(std::move(name)) {}
    BuildDir(const BuildDir&) = delete;
    BuildDir& operator=(const BuildDir&) = delete;
    ~BuildDir()
    {
        if (!name_.empty())
            (void)remove_tree(cache_fd_, name_, name_);  // best effort: LocalCache::open removes dead builds
    }
    const std::string& name() const { return name_; }
    void committed() { name_.clear(); }

private:
    int cache_fd_;
    std::string name_;
};

// A whole small file, read or written in one go (O_EXCL on write: the cache never overwrites).
Result<std::string> read_file_at(int dirfd, const std::string& name);
Status write_file_at(int dirfd, const std::string& name, std::string_view bytes, mode_t mode);

}  // namespace qk::key::cache_fs
