#include "place.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "tree_ops.hpp"

namespace qk::enforce {

namespace {

// Exchanging rather than renaming over the old entry also keeps its inode alive: freeing it, or a
// directory's thousands, is what costs time, and the trash defers it.
Status rename_over(int from_dir, const std::string& from, int to_dir, const std::string& to, std::string_view shown,
                   Trash& trash, bool& crossed)
{
    crossed = false;
    struct stat dst;
    const bool exists = ::fstatat(to_dir, to.c_str(), &dst, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists && errno != ENOENT)
        return sys_error(fmt::format("cannot look at {} in the workspace", shown));
    int rc = ::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), exists ? RENAME_EXCHANGE : RENAME_NOREPLACE);
    if (rc != 0 && exists && errno == EINVAL) {
        // No RENAME_EXCHANGE here (NFS, some FUSE): move the old entry away, then rename.
        if (auto s = trash.dispose(to_dir, to, shown); !s)
            return s;
        rc = ::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), RENAME_NOREPLACE);
        if (rc == 0)
            return {};
    }
    if (rc != 0) {
        if (errno == EXDEV) {
            crossed = true;
            return {};
        }
        return sys_error(fmt::format("cannot move {} into the workspace", shown));
    }
    return exists ? trash.dispose(from_dir, from, fmt::format("{} (what it replaced)", shown)) : Status();
}

}  // namespace

Status place(int from_dir, const std::string& from, int to_dir, const std::string& to, std::string_view shown,
             Trash& trash)
{
    bool crossed = false;
    if (auto s = rename_over(from_dir, from, to_dir, to, shown, trash, crossed); !s || !crossed)
        return s;
    // Another filesystem: a whole copy under a name of our own beside the target, then the same swap,
    // which is now within one directory and so one filesystem.
    std::string temp;
    Status copied;
    for (int attempt = 0; attempt < 16; ++attempt) {
        temp = tree::random_name(".qk-apply-");
        copied = tree::copy_tree(from_dir, from, to_dir, temp, shown);
        if (copied || copied.error().sys_errno != EEXIST)
            break;
    }
    if (!copied) {
        (void)tree::remove_tree(to_dir, temp, temp);
        return copied;
    }
    if (auto s = rename_over(to_dir, temp, to_dir, to, shown, trash, crossed); !s || crossed) {
        (void)tree::remove_tree(to_dir, temp, temp);
        return s ? sys_error(fmt::format("cannot move {} into the workspace: its place is on another filesystem "
                                         "than its directory (a mount point)",
                                         shown),
                             EXDEV)
                 : s;
    }
    return tree::remove_tree(from_dir, from, shown);
}

}  // namespace qk::enforce
