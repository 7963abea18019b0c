#include "tree_ops.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "qk/util/unique_fd.hpp"

namespace qk::enforce::tree {

std::string join(std::string_view dir, std::string_view name)
{
    if (dir.empty())
        return std::string(name);
    std::string out;
    out.reserve(dir.size() + 1 + name.size());
    out.append(dir).append(1, '/').append(name);
    return out;
}

std::string proc_path(int dirfd, std::string_view name)
{
    return fmt::format("/proc/self/fd/{}/{}", dirfd, name);
}

std::string random_name(std::string_view prefix)
{
    static constexpr std::string_view alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::array<unsigned char, 6> bytes{};
    if (::getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
        for (auto& b : bytes)  // getrandom cannot fail for 6 bytes once the pool is ready; be safe anyway
            b = static_cast<unsigned char>(::random());
    std::string out(prefix);
    for (unsigned char b : bytes)
        out += alphabet[b % alphabet.size()];
    return out;
}

Result<std::vector<DirEntry>> list_dir(int dirfd)
{
    // fdopendir takes the fd over and reads from its offset: give it a fresh open of the same directory.
    UniqueFd dup(::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dup.valid())
        return sys_error("cannot open directory to list it");
    DIR* dir = ::fdopendir(dup.get());
    if (dir == nullptr)
        return sys_error("cannot list directory");
    dup.release();
    std::vector<DirEntry> out;
    errno = 0;
    while (dirent* e = ::readdir(dir)) {
        std::string_view name = e->d_name;
        if (name != "." && name != "..")
            out.push_back({std::string(name), e->d_type});
        errno = 0;
    }
    const int err = errno;
    ::closedir(dir);
    if (err != 0)
        return sys_error("cannot list directory", err);
    std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return out;
}

namespace {

// Opens directory `name` for listing; a directory we own but may not read (mode 000, as the overlay
// makes work/work) gets owner rights first. The chmod goes through an O_PATH fd checked to be a
// directory, so a link put in its place is never followed.
UniqueFd open_dir_for_removal(int dirfd, const std::string& name)
{
    UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.valid() || errno != EACCES)
        return fd;
    UniqueFd path(::openat(dirfd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st;
    if (!path.valid() || ::fstat(path.get(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = EACCES;
        return UniqueFd();
    }
    if (::chmod(fmt::format("/proc/self/fd/{}", path.get()).c_str(), (st.st_mode & 07777) | S_IRWXU) != 0) {
        errno = EACCES;
        return UniqueFd();
    }
    return UniqueFd(::openat(path.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

Status remove_contents(int fd, std::string_view shown)
{
    // A directory a tool made read-only (or the overlay's mode-000 work/work) cannot be emptied by its
    // owner until it is given back owner rights; root does not need them.
    struct stat st;
    // Best effort: group or other bits may allow it all the same, and a removal that needed it says why.
    if (::fstat(fd, &st) == 0 && (st.st_mode & S_IRWXU) != S_IRWXU)
        (void)::fchmod(fd, (st.st_mode & 07777) | S_IRWXU);
    auto entries = list_dir(fd);
    if (!entries)
        return sys_error(fmt::format("cannot list {} to remove it", shown), entries.error().sys_errno);
    for (const DirEntry& e : *entries) {
        std::string child = join(shown, e.name);
        if (e.type != DT_DIR) {
            if (::unlinkat(fd, e.name.c_str(), 0) == 0 || errno == ENOENT)
                continue;
            if (errno != EISDIR)  // DT_UNKNOWN that was a directory falls through to the directory case
                return sys_error(fmt::format("cannot remove {}", child));
        }
        if (auto s = remove_tree(fd, e.name, child); !s)
            return s;
    }
    return {};
}

}  // namespace

Status remove_tree(int dirfd, const std::string& name, std::string_view shown)
{
    if (::unlinkat(dirfd, name.c_str(), 0) == 0 || errno == ENOENT)
        return {};
    if (errno != EISDIR)
        return sys_error(fmt::format("cannot remove {}", shown));
    UniqueFd fd = open_dir_for_removal(dirfd, name);
    if (!fd.valid()) {
        if (errno == ENOENT)
            return {};
        if (errno == EMFILE || errno == ENFILE)
            return sys_error(fmt::format("cannot remove {}: the tree is deeper than the open file limit", shown));
        return sys_error(fmt::format("cannot remove {}", shown));
    }
    if (auto s = remove_contents(fd.get(), shown); !s)
        return s;
    fd.reset();
    if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
        return sys_error(fmt::format("cannot remove directory {}", shown));
    return {};
}

bool is_whiteout(int dirfd, const std::string& name, const struct stat& st)
{
    if (S_ISCHR(st.st_mode))
        return st.st_rdev == 0;
    if (!S_ISREG(st.st_mode) || st.st_size != 0)
        return false;
    char v;
    return ::lgetxattr(proc_path(dirfd, name).c_str(), "user.overlay.whiteout", &v, 1) >= 0 || errno == ERANGE;
}

bool is_overlay_xattr(std::string_view x)
{
    return x.starts_with("user.overlay.") || x.starts_with("trusted.overlay.");
}

Status strip_overlay_xattrs(int dirfd, const std::string& name, std::string_view shown)
{
    const std::string path = proc_path(dirfd, name);
    std::string names(256, '\0');
    ssize_t n;
    while ((n = ::llistxattr(path.c_str(), names.data(), names.size())) < 0 && errno == ERANGE) {
        ssize_t need = ::llistxattr(path.c_str(), nullptr, 0);
        names.resize(need > 0 ? static_cast<std::size_t>(need) + 64 : names.size() * 2);
    }
    if (n < 0) {
        if (errno == ENOTSUP || errno == ENOENT)
            return {};  // a filesystem without xattrs carries no overlay metadata
        return sys_error(fmt::format("cannot list the extended attributes of {}", shown));
    }
    for (std::size_t at = 0; at < static_cast<std::size_t>(n);) {
        const char* x = names.data() + at;
        std::string_view xv(x);
        at += xv.size() + 1;
        if (is_overlay_xattr(xv) && ::lremovexattr(path.c_str(), x) != 0 && errno != ENODATA)
            return sys_error(fmt::format("cannot remove overlay attribute {} from {}", xv, shown));
    }
    return {};
}

Status strip_overlay_xattrs_tree(int dirfd, const std::string& name, std::string_view shown)
{
    if (auto s = strip_overlay_xattrs(dirfd, name, shown); !s)
        return s;
    UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid())
        return errno == ENOTDIR || errno == ELOOP ? Status() : sys_error(fmt::format("cannot open {}", shown));
    auto entries = list_dir(fd.get());
    if (!entries)
        return sys_error(fmt::format("cannot list {}", shown), entries.error().sys_errno);
    for (const DirEntry& e : *entries) {
        std::string child = join(shown, e.name);
        auto s = e.type == DT_DIR || e.type == DT_UNKNOWN ? strip_overlay_xattrs_tree(fd.get(), e.name, child)
                                                          : strip_overlay_xattrs(fd.get(), e.name, child);
        if (!s)
            return s;
    }
    return {};
}

}  // namespace qk::enforce::tree
