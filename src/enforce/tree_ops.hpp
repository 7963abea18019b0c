// Filesystem operations the sandbox directory and the apply step share: removing a tree, stripping
// overlayfs' own xattrs, and copying an entry across filesystems. None of them follows a symbolic link.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "qk/util/path_parts.hpp"
#include "qk/util/result.hpp"

namespace qk::enforce::tree {

// "a/b" joined as a workspace-relative path ("" is the root).
std::string join(std::string_view dir, std::string_view name);
// The directory part of a relative path ("" for a top-level name), and the last component: util's.
using qk::name_of;
using qk::parent_of;

// A path that reaches `name` in the directory open as `dirfd` without following `name` itself when it
// is a link: the path-based xattr and chmod calls take it where no *at form exists.
std::string proc_path(int dirfd, std::string_view name);

// A fresh name "<prefix>XXXXXX" (random letters and digits) for mkdirat/openat with O_EXCL.
std::string random_name(std::string_view prefix);

struct DirEntry {
    std::string name;
    unsigned char type;  // DT_* (DT_UNKNOWN when the filesystem does not say)
};
// The entries of the directory open as `dirfd` ("." and ".." left out), sorted by name bytes. The
// listing goes through a duplicate, so `dirfd` stays usable and its offset untouched.
Result<std::vector<DirEntry>> list_dir(int dirfd);

// Removes `name` in `dirfd` and everything beneath it, never following a link: a link is removed, not
// what it points to. Directories it cannot list or empty (the overlay's work/work is made mode 000)
// are given owner rights first. A missing `name` is success. `shown` names it in errors.
Status remove_tree(int dirfd, const std::string& name, std::string_view shown);

// Whether the entry `name` in `dirfd` (lstat'ed as `st`) is an overlay whiteout: a char device 0/0, the
// form the kernel writes, or a zero-size regular file with user.overlay.whiteout, the form userspace
// tools write.
bool is_whiteout(int dirfd, const std::string& name, const struct stat& st);

// Whether an xattr name is overlayfs' own (user.overlay.*, trusted.overlay.*), including the escaped
// user.overlay.overlay.* a task's own setxattr of such a name is stored as.
bool is_overlay_xattr(std::string_view xattr_name);
// Removes the overlay xattrs of `name` in `dirfd` (not following it), or of everything beneath it too.
Status strip_overlay_xattrs(int dirfd, const std::string& name, std::string_view shown);
Status strip_overlay_xattrs_tree(int dirfd, const std::string& name, std::string_view shown);

// Copies `from_name` in `from_dir` to `to_name` in `to_dir` (which must not exist): file data, mode and
// times; links recreated, never followed; fifos and sockets remade; directories recursively. No xattrs
// are copied, so overlay xattrs do not travel. For moving across filesystems, where rename(2) cannot.
Status copy_tree(int from_dir, const std::string& from_name, int to_dir, const std::string& to_name,
                 std::string_view shown);

}  // namespace qk::enforce::tree
