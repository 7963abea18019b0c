#include "place.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "tree_ops.hpp"

namespace qk::enforce
{

namespace
{

// rename(2) cannot put a file where a directory is, nor a directory over a non-empty one; exchanging
// the two and removing the old one from where the new one was can, without the path ever missing.
Status rename_over(int from_dir, const std::string& from, int to_dir, const std::string& to, std::string_view shown,
                   bool& crossed)
{
    crossed = false;
    struct stat src, dst;
    if (::fstatat(from_dir, from.c_str(), &src, AT_SYMLINK_NOFOLLOW) != 0)
        return sys_error(fmt::format("cannot find {} to apply it", shown));
    int rc;
    bool exchanged = false;
    if (::fstatat(to_dir, to.c_str(), &dst, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT)
            return sys_error(fmt::format("cannot look at {} in the workspace", shown));
        rc = ::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), RENAME_NOREPLACE);
    } else if (S_ISDIR(src.st_mode) || S_ISDIR(dst.st_mode)) {
        rc = ::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), RENAME_EXCHANGE);
        exchanged = true;
    } else {
        rc = ::renameat(from_dir, from.c_str(), to_dir, to.c_str());
    }
    if (rc != 0) {
        if (errno == EXDEV) {
            crossed = true;
            return {};
        }
        return sys_error(fmt::format("cannot move {} into the workspace", shown));
    }
    if (exchanged)
        if (auto s = tree::remove_tree(from_dir, from, fmt::format("{} (what it replaced)", shown)); !s)
            return s;
    return {};
}

} // namespace

Status place(int from_dir, const std::string& from, int to_dir, const std::string& to, std::string_view shown)
{
    bool crossed = false;
    if (auto s = rename_over(from_dir, from, to_dir, to, shown, crossed); !s || !crossed)
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
    if (auto s = rename_over(to_dir, temp, to_dir, to, shown, crossed); !s || crossed) {
        (void)tree::remove_tree(to_dir, temp, temp);
        return s ? sys_error(fmt::format("cannot move {} into the workspace: its place is on another filesystem "
                                         "than its directory (a mount point)",
                                         shown),
                             EXDEV)
                 : s;
    }
    return tree::remove_tree(from_dir, from, shown);
}

} // namespace qk::enforce
