#include "cache_copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "qk/util/io.hpp"
#include "qk/util/sparse_copy.hpp"

namespace qk::key::cache_copy {

using cache_fs::name_of;
using cache_fs::open_dir_beneath;
using cache_fs::OpenedDir;
using cache_fs::parent_of;

namespace {

Error failure(std::string_view output, const cache_fs::OpenedDir& at)
{
    if (at.err == ELOOP)
        return cache_fs::link_on_the_way(output, at.at);
    return sys_error(fmt::format("cannot open {} to store output {}", at.at.empty() ? "." : at.at, output),
                     at.err ? at.err : errno);
}

Result<CachedFile> copy_link(CachedFile f, int src, int dst, const std::string& name)
{
    auto target = read_link_at(src, name.c_str());
    if (!target)
        return sys_error(fmt::format("cannot read the symbolic link {}", f.path), target.error().sys_errno);
    if (::symlinkat(target->c_str(), dst, name.c_str()) != 0)
        return sys_error(fmt::format("cannot store the symbolic link {}", f.path));
    f.size = target->size();
    f.target = std::move(*target);
    return f;
}

// Creates `name` in `dir` with `make`; what stands there (a path the outputs name, left by something
// else since) is removed first.
template <class Make> Result<int> create_replacing(int dir, const std::string& name, const std::string& path, Make make)
{
    int r = make();
    if (r < 0 && errno == EEXIST) {
        QK_TRY_STATUS(cache_fs::remove_tree(dir, name, path));
        r = make();
    }
    if (r < 0)
        return sys_error(fmt::format("cannot create {}", path));
    return r;
}

}  // namespace

Error open_failure(std::string_view output, const OpenedDir& d)
{
    if (d.err == ELOOP)
        return cache_fs::link_on_the_way(output, d.at);
    if (d.err == ENOTDIR)
        return error(fmt::format("{} is not a directory, and output {} lies under it; remove {}", d.at, output, d.at));
    return sys_error(fmt::format("cannot open {} to restore output {}", d.at.empty() ? "." : d.at, output), d.err);
}

Result<CachedFile> EntryWriter::add(const OutputFile& out)
{
    CachedFile f{out.path, out.kind};
    if (out.kind == OutputFile::Kind::directory) {
        const auto& src = from_.open(out.path);
        if (!src.fd.valid())
            return failure(out.path, src);
        auto copy = open_dir_beneath(copies_fd_, out.path, true);
        if (!copy.fd.valid())
            return failure(out.path, copy);
        struct stat st;
        if (::fstat(src.fd.get(), &st) != 0)
            return sys_error(fmt::format("cannot stat output directory {}", out.path));
        f.mode = st.st_mode & 07777;
        return f;
    }
    const auto& src = from_.open(parent_of(out.path));
    if (!src.fd.valid())
        return failure(out.path, src);
    const auto& dst = to_.open(parent_of(out.path));
    if (!dst.fd.valid())
        return failure(out.path, dst);
    std::string name(name_of(out.path));
    if (out.kind == OutputFile::Kind::symlink)
        return copy_link(std::move(f), src.fd.get(), dst.fd.get(), name);
    UniqueFd in(::openat(src.fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
    struct stat st;
    if (!in.valid() || ::fstat(in.get(), &st) != 0)
        return sys_error(fmt::format("cannot read output {}", out.path));
    if (!S_ISREG(st.st_mode))
        return error(fmt::format("output {} stopped being a file while it was stored", out.path));
    if (allocated_bytes(st) > budget_)
        return error(fmt::format("{} takes {} on disk, more than is left of the {} an entry may take", out.path,
                                 entry_check::shown_size(allocated_bytes(st)), "QK_CACHE_MAX_ENTRY_SIZE"),
                     ErrorKind::cache_entry_too_big);
    budget_ -= allocated_bytes(st);
    // Readable by us whatever the output's mode; restore applies the mode meta.json records.
    UniqueFd copy(::openat(dst.fd.get(), name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
                           (st.st_mode & 0777) | S_IRUSR));
    if (!copy.valid())
        return sys_error(fmt::format("cannot create the cached copy of {}", out.path));
    QK_TRY_STATUS(cache_fs::copy_data(in.get(), copy.get(), out.path));
    struct stat copied;
    if (::fstat(copy.get(), &copied) != 0)
        return sys_error(fmt::format("cannot stat the cached copy of {}", out.path));
    f.mode = st.st_mode & 07777;
    f.size = static_cast<std::uint64_t>(copied.st_size);
    // Of the copy, as it lies in the cache: what a restore checks it against.
    QK_TRY(hash, hash_fd(copy.get(), "the cached copy of " + out.path));
    f.hash = *hash;
    return f;
}

Status Restorer::put_back(const CachedFile& f)
{
    if (f.kind == OutputFile::Kind::directory) {
        auto dir = open_dir_beneath(root_fd_, f.path, true);
        if (!dir.fd.valid())
            return open_failure(f.path, dir);
        if (::fchmod(dir.fd.get(), f.mode) != 0)
            return sys_error(fmt::format("cannot set the mode of {}", f.path));
        return {};
    }
    const OpenedDir& to = to_.open(parent_of(f.path));
    if (!to.fd.valid())
        return open_failure(f.path, to);
    const int dir = to.fd.get();
    std::string name(name_of(f.path));
    if (f.kind == OutputFile::Kind::symlink) {
        auto made =
            create_replacing(dir, name, f.path, [&] { return ::symlinkat(f.target.c_str(), dir, name.c_str()); });
        return made ? Status() : Status(made.error());
    }
    const OpenedDir& from = from_.open(parent_of(f.path));
    UniqueFd in(from.fd.valid() ? ::openat(from.fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1);
    if (!in.valid())
        return sys_error(fmt::format("cannot read the cached copy of {}", f.path), from.err ? from.err : errno);
    QK_TRY(out, create(f));
    QK_TRY_STATUS(cache_fs::copy_data(in.get(), out->get(), f.path));
    return seal(out->get(), f);
}

Result<UniqueFd> Restorer::create(const CachedFile& f)
{
    const OpenedDir& to = to_.open(parent_of(f.path));
    if (!to.fd.valid())
        return open_failure(f.path, to);
    const int dir = to.fd.get();
    std::string name(name_of(f.path));
    auto made = create_replacing(dir, name, f.path, [&] {
        return ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    });
    if (!made)
        return made.error();
    return UniqueFd(*made);
}

Status Restorer::seal(int fd, const CachedFile& f)
{
    // After the data: the mode may deny us writing, and writing clears set-id bits. Never a set-id bit,
    // whatever the entry says (one stored before qk refused them, a warm.json edited by hand): a root
    // task's setuid shell restored would be root's to whoever runs it.
    if (::fchmod(fd, f.mode & ~static_cast<std::uint32_t>(S_ISUID | S_ISGID)) != 0)
        return sys_error(fmt::format("cannot set the mode of {}", f.path));
    return {};
}

entry_check::EntrySize measure(int root_fd, std::span<const OutputFile> list)
{
    entry_check::EntrySize size;
    cache_fs::DirCursor from(root_fd, false);
    for (const OutputFile& f : list) {
        if (f.kind != OutputFile::Kind::file)
            continue;
        const OpenedDir& dir = from.open(parent_of(f.path));
        struct stat st;
        const std::string name(name_of(f.path));
        if (!dir.fd.valid() || ::fstatat(dir.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        size.allocated += allocated_bytes(st);
        size.apparent += static_cast<std::uint64_t>(st.st_size);
    }
    return size;
}

Status check_copies(int copies_fd, std::span<const CachedFile> files)
{
    for (const CachedFile& f : files) {
        if (f.kind != OutputFile::Kind::file)
            continue;
        UniqueFd copy(::openat(copies_fd, f.path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
        auto hash = copy.valid() ? hash_fd(copy.get(), f.path) : Result<Hash128>(sys_error("cannot open " + f.path));
        if (!hash)
            return error(fmt::format("the cached copy of {} cannot be read ({})", f.path, hash.error().message));
        if (*hash != f.hash)
            return error(fmt::format("the cached copy of {} changed since it was stored", f.path));
    }
    return {};
}

}  // namespace qk::key::cache_copy
