// LocalCache::store: an entry is built whole in .qk/cache/tmp/<hex>.<pid>.<n>, then renamed to <hex>, so a
// process killed at any moment leaves at most a build directory, which is not an entry.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cache_copy.hpp"
#include "cache_fs.hpp"
#include "cache_meta.hpp"
#include "entry_check.hpp"
#include "qk/key/cache.hpp"

namespace qk::key {

Status LocalCache::store(const Hash128& hash, const CacheRecord& record, std::string* warm_note)
{
    const std::string hex = hash.hex();
    auto fail = [&](const Error& e) {
        if (e.kind == ErrorKind::cache_entry_too_big || e.kind == ErrorKind::cache_entry_unsafe ||
            e.sys_errno == ENOSPC)
            note_refused(record.task, e.message);
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
    // Measured before a byte is written: over the limit, or over what the disk can spare, nothing is, and
    // the outputs stay in the workspace as the task left them.
    const entry_check::EntrySize size = cache_copy::measure(root_fd_.get(), *list);
    if (Status s = entry_check::within_limit(size, max_entry_bytes_); !s)
        return fail(s.error());
    if (Status s = entry_check::room_for(dir_fd_.get(), size.allocated); !s)
        return fail(s.error());

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
    cache_copy::EntryWriter writer(root_fd_.get(), files.get(), max_entry_bytes_);
    for (const OutputFile& out : *list) {
        auto f = writer.add(out);
        if (!f)
            return fail(f.error());
        // What no entry may hold, refused here in every mode as a remote entry's import refuses it.
        std::optional<std::string> why = f->kind == OutputFile::Kind::symlink
                                             ? entry_check::link_refused(*outputs, f->path, f->target)
                                             : entry_check::mode_refused(*f);
        if (why)
            return fail(error(*why + "; the entry is not stored, and the output stays in the workspace",
                              ErrorKind::cache_entry_unsafe));
        stored.push_back(std::move(*f));
    }
    // Beside the outputs, never among them; a task without warm paths pays nothing here.
    const bool warm_kept =
        !record.warm.empty() && keep_warm(entry.get(), record, *outputs, writer.budget_left(), warm_note);
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
        if (warm_kept)
            remember_warm(record.task, hash);
        return {};
    }
    // Another run stored the same key since we looked, or imported it packed (a file: ENOTDIR): keep
    // theirs (ours is removed with `build`).
    if (errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR)
        return {};
    return fail(sys_error(fmt::format("cannot rename {} to {}", build.name(), hex)));
}

}  // namespace qk::key
