// copy_tree: moving out of an upper layer that is not on the workspace's filesystem, where rename(2)
// fails with EXDEV. Rarely used (the sandbox directory is chosen on the same filesystem when one can be).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>

#include "qk/util/sparse_copy.hpp"
#include "qk/util/unique_fd.hpp"
#include "tree_ops.hpp"

namespace qk::enforce::tree {

namespace {

Status copy_file(int from_dir, const std::string& from, int to_dir, const std::string& to, const struct stat& st,
                 std::string_view shown)
{
    UniqueFd in(::openat(from_dir, from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!in.valid())
        return sys_error(fmt::format("cannot open {} to copy it", shown));
    UniqueFd out(::openat(to_dir, to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out.valid())
        return sys_error(fmt::format("cannot create a copy of {}", shown));
    // Holes kept: a sparse output is applied sparse across filesystems as by a rename.
    if (auto s = copy_sparse(in.get(), out.get(), shown); !s)
        return s;
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    if (::fchmod(out.get(), st.st_mode & 07777) != 0 || ::futimens(out.get(), times) != 0)
        return sys_error(fmt::format("cannot set the mode and times of the copy of {}", shown));
    return {};
}

}  // namespace

Status copy_tree(int from_dir, const std::string& from, int to_dir, const std::string& to, std::string_view shown)
{
    struct stat st;
    if (::fstatat(from_dir, from.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return sys_error(fmt::format("cannot copy {}", shown));
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    if (S_ISREG(st.st_mode))
        return copy_file(from_dir, from, to_dir, to, st, shown);
    if (S_ISLNK(st.st_mode)) {
        std::string target(static_cast<std::size_t>(st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(from_dir, from.c_str(), target.data(), target.size());
        if (n < 0 || static_cast<std::size_t>(n) >= target.size())
            return sys_error(fmt::format("cannot read link {}", shown), n < 0 ? errno : EOVERFLOW);
        target.resize(static_cast<std::size_t>(n));
        if (::symlinkat(target.c_str(), to_dir, to.c_str()) != 0)
            return sys_error(fmt::format("cannot recreate link {}", shown));
        (void)::utimensat(to_dir, to.c_str(), times, AT_SYMLINK_NOFOLLOW);  // best effort: a link's times
        return {};
    }
    if (!S_ISDIR(st.st_mode)) {
        // fifos and sockets are remade empty; a device needs CAP_MKNOD, and says so when it fails.
        if (::mknodat(to_dir, to.c_str(), st.st_mode, st.st_rdev) != 0)
            return sys_error(fmt::format("cannot recreate {} (a special file)", shown));
        (void)::utimensat(to_dir, to.c_str(), times, AT_SYMLINK_NOFOLLOW);  // best effort, as a link's
        return {};
    }
    if (::mkdirat(to_dir, to.c_str(), 0700) != 0)
        return sys_error(fmt::format("cannot create the copy of directory {}", shown));
    UniqueFd in(::openat(from_dir, from.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    UniqueFd out(::openat(to_dir, to.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!in.valid() || !out.valid())
        return sys_error(fmt::format("cannot open directory {} to copy it", shown));
    auto entries = list_dir(in.get());
    if (!entries)
        return sys_error(fmt::format("cannot list {}", shown), entries.error().sys_errno);
    for (const DirEntry& e : *entries)
        if (auto s = copy_tree(in.get(), e.name, out.get(), e.name, join(shown, e.name)); !s)
            return s;
    // Mode and times last: the copy was kept writable while filling it, and filling it changed mtime.
    if (::fchmod(out.get(), st.st_mode & 07777) != 0 || ::futimens(out.get(), times) != 0)
        return sys_error(fmt::format("cannot set the mode and times of the copy of {}", shown));
    return {};
}

}  // namespace qk::enforce::tree
