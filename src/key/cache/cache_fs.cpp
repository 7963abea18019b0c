#include "cache_fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "qk/util/io.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/sparse_copy.hpp"

namespace qk::key::cache_fs {

Error link_on_the_way(std::string_view output, std::string_view link)
{
    return error(fmt::format("output {}: {} is a symbolic link, and qk never reads or writes outputs through a "
                             "link in the workspace; make {} a real directory, or declare the output where "
                             "the link points",
                             output, link, link));
}

OpenedDir open_dir_beneath(int base, std::string_view path, bool create)
{
    OpenedDir out;
    out.fd.reset(::openat(base, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!out.fd.valid()) {
        out.err = errno;
        return out;
    }
    for (std::string_view part : path_components(path)) {
        if (!out.at.empty())
            out.at += '/';
        out.at += part;
        std::string name(part);
        int fd = ::openat(out.fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create) {
            // Another thread may make the same directory between our two calls: EEXIST is fine.
            if (::mkdirat(out.fd.get(), name.c_str(), 0777) == 0 || errno == EEXIST)
                fd = ::openat(out.fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0) {
            int err = errno;
            // O_NOFOLLOW|O_DIRECTORY gives ELOOP or ENOTDIR for a link depending on the kernel: ask lstat.
            struct stat st;
            if ((err == ELOOP || err == ENOTDIR) &&
                ::fstatat(out.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
                err = S_ISLNK(st.st_mode) ? ELOOP : S_ISDIR(st.st_mode) ? err : ENOTDIR;
            out.fd.reset();
            out.err = err;
            return out;
        }
        out.fd.reset(fd);
    }
    out.at.clear();
    return out;
}

const OpenedDir& DirCursor::open(std::string_view dir)
{
    if (!opened_ || dir != path_) {
        current_ = open_dir_beneath(base_, dir, create_);
        path_ = dir;
        opened_ = true;
    }
    return current_;
}

Status copy_data(int src, int dst, std::string_view what)
{
    // A reflink shares the extents: instant, holes kept, and copy-on-write keeps cache and workspace apart.
    if (::ioctl(dst, FICLONE, src) == 0)
        return {};
    // Else only the data: a sparse output takes in the cache what it takes in the workspace.
    return copy_sparse(src, dst, what);
}

Status remove_tree(int dirfd, const std::string& name, std::string_view display)
{
    if (::unlinkat(dirfd, name.c_str(), 0) == 0 || errno == ENOENT)
        return {};
    if (errno != EISDIR && errno != EPERM)
        return sys_error(fmt::format("cannot remove {}", display));
    int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && ::fchmodat(dirfd, name.c_str(), 0700, 0) == 0)
        fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return sys_error(fmt::format("cannot open {} to remove it", display));
    DIR* dir = ::fdopendir(fd);
    if (!dir) {
        ::close(fd);
        return sys_error(fmt::format("cannot list {} to remove it", display));
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
        std::string_view n = e->d_name;
        if (n != "." && n != "..")
            names.emplace_back(n);
    }
    // A read-only directory (some tools make them) must be writable to empty it.
    if (!names.empty() && ::faccessat(::dirfd(dir), ".", W_OK | X_OK, AT_EACCESS) != 0 &&
        ::fchmod(::dirfd(dir), 0700) != 0) {
        Status s = sys_error(fmt::format("cannot make {} writable to empty it", display));
        ::closedir(dir);
        return s;
    }
    Status result;
    for (const std::string& n : names) {
        if (Status s = remove_tree(::dirfd(dir), n, fmt::format("{}/{}", display, n)); !s) {
            result = s;
            break;
        }
    }
    ::closedir(dir);
    if (!result)
        return result;
    if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
        return sys_error(fmt::format("cannot remove {}", display));
    return {};
}

Result<std::string> read_file_at(int dirfd, const std::string& name)
{
    UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid())
        return sys_error(fmt::format("cannot open {}", name));
    std::string out;
    struct stat st;
    std::size_t hint = ::fstat(fd.get(), &st) == 0 && st.st_size > 0 ? static_cast<std::size_t>(st.st_size) + 1 : 0;
    if (Status s = read_all(fd.get(), out, hint); !s)
        return sys_error(fmt::format("cannot read {}", name), s.error().sys_errno);
    return out;
}

Status write_file_at(int dirfd, const std::string& name, std::string_view bytes, mode_t mode)
{
    UniqueFd fd(::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd.valid())
        return sys_error(fmt::format("cannot create {}", name));
    if (Status s = write_all(fd.get(), bytes); !s)
        return sys_error(fmt::format("cannot write {}", name), s.error().sys_errno);
    return {};
}

}  // namespace qk::key::cache_fs
