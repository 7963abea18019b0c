// LocalCache::store: an entry is built whole in .qk/cache/tmp/<hex>.<pid>.<n>, then renamed to <hex>, so a
// process killed at any moment leaves at most a build directory, which is not an entry.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cache_fs.hpp"
#include "cache_meta.hpp"
#include "qk/key/cache.hpp"

namespace qk::key {

namespace {

using cache_fs::name_of;
using cache_fs::open_dir_beneath;
using cache_fs::parent_of;

// Copies the outputs from the workspace into the entry's files/ directory.
class EntryWriter {
public:
    EntryWriter(int root_fd, int files_fd) : from_(root_fd, false), to_(files_fd, true), files_fd_(files_fd) {}

    Result<CachedFile> add(const OutputFile& out)
    {
        CachedFile f{out.path, out.kind};
        if (out.kind == OutputFile::Kind::directory) {
            const auto& src = from_.open(out.path);
            if (!src.fd.valid())
                return failure(out.path, src);
            auto copy = open_dir_beneath(files_fd_, out.path, true);
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

private:
    static Error failure(std::string_view output, const cache_fs::OpenedDir& at)
    {
        if (at.err == ELOOP)
            return cache_fs::link_on_the_way(output, at.at);
        return sys_error(fmt::format("cannot open {} to store output {}", at.at.empty() ? "." : at.at, output),
                         at.err ? at.err : errno);
    }

    static Result<CachedFile> copy_link(CachedFile f, int src, int dst, const std::string& name)
    {
        std::string target(256, '\0');
        for (;;) {
            ssize_t n = ::readlinkat(src, name.c_str(), target.data(), target.size());
            if (n < 0)
                return sys_error(fmt::format("cannot read the symbolic link {}", f.path));
            if (static_cast<std::size_t>(n) < target.size()) {
                target.resize(static_cast<std::size_t>(n));
                break;
            }
            target.resize(target.size() * 2);
        }
        if (::symlinkat(target.c_str(), dst, name.c_str()) != 0)
            return sys_error(fmt::format("cannot store the symbolic link {}", f.path));
        f.size = target.size();
        f.target = std::move(target);
        return f;
    }

    cache_fs::DirCursor from_, to_;
    int files_fd_;
};

}  // namespace

Status LocalCache::store(const Hash128& hash, const CacheRecord& record)
{
    const std::string hex = hash.hex();
    auto fail = [&](const Error& e) {
        return with_message(e, fmt::format("cannot cache {}: {}", record.task, e.message));
    };
    struct stat st;
    if (::fstatat(dir_fd_.get(), hex.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        return {};  // stored first by another run: an entry is never replaced
    auto outputs = OutputSet::compile(record.outputs);
    if (!outputs)
        return fail(outputs.error());
    auto list = collect_output_files(root_fd_.get(), *outputs);
    if (!list)
        return fail(list.error());

    cache_fs::BuildDir build(dir_fd_.get(), tmp_name(hex));
    if (::mkdirat(dir_fd_.get(), build.name().c_str(), 0755) != 0)
        return fail(sys_error(fmt::format("cannot create {}", (dir_ / build.name()).string())));
    UniqueFd entry(::openat(dir_fd_.get(), build.name().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!entry.valid() || ::mkdirat(entry.get(), "files", 0755) != 0)
        return fail(sys_error(fmt::format("cannot create {}/files", (dir_ / build.name()).string())));
    UniqueFd files(::openat(entry.get(), "files", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!files.valid())
        return fail(sys_error(fmt::format("cannot open {}/files", (dir_ / build.name()).string())));

    std::vector<CachedFile> stored;
    stored.reserve(list->size());
    EntryWriter writer(root_fd_.get(), files.get());
    for (const OutputFile& out : *list) {
        auto f = writer.add(out);
        if (!f)
            return fail(f.error());
        stored.push_back(std::move(*f));
    }
    QK_TRY(meta, cache_meta::write(hash, record, stored, record.terminal_output.size(), cache_meta::now_utc()));
    // meta.json last: an entry renamed into place without it could only come from a damaged disk.
    if (Status s = cache_fs::write_file_at(entry.get(), "terminal.log", record.terminal_output, 0644); !s)
        return fail(s.error());
    if (!record.provenance.empty()) {
        if (Status s = cache_meta::check_provenance(record.provenance); !s)
            return fail(s.error());
        if (Status s = cache_fs::write_file_at(entry.get(), "provenance.json", record.provenance, 0644); !s)
            return fail(s.error());
    }
    if (Status s = cache_fs::write_file_at(entry.get(), "meta.json", *meta, 0644); !s)
        return fail(s.error());

    if (::renameat(dir_fd_.get(), build.name().c_str(), dir_fd_.get(), hex.c_str()) == 0) {
        build.committed();
        return {};
    }
    // Another run stored the same key since we looked: keep theirs (ours is removed with `build`).
    if (errno == ENOTEMPTY || errno == EEXIST)
        return {};
    return fail(sys_error(fmt::format("cannot rename {} to {}", build.name(), hex)));
}

}  // namespace qk::key
