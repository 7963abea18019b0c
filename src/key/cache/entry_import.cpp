// EntryImport: an archive (entry_archive.hpp) received in chunks, kept as it came: one file, a packed entry
// (`.qk/cache/<hex>`, as turbo keeps `.turbo/cache/<hash>.tar.zst`), rather than unpacked into a directory
// of copies. Each chunk goes through the EntryReader, which checks meta.json (entry_check) before the file
// is even created, then every size and every file's hash as the bytes stream by; the file is written in
// an unnamed file in .qk/cache (O_TMPFILE; where the file system has none, a named one in .qk/cache/tmp)
// and linked (renamed) into place only once the stream ended exactly where its last file does and the
// caller's policy accepted its provenance. Unpacking made 9 inodes an entry on a disk where each costs
// (docs/benchmarks.md, "Where a remote restore's time goes"); the packed form makes 1, and a restore
// writes each output once, where it lands (cache_packed.cpp). The checked bytes are also kept in memory
// (fresh_entries.hpp), so the run that fetched the entry finds and restores it without reading it back.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>

#include <fmt/format.h>

#include "cache_fs.hpp"
#include "entry_check.hpp"
#include "entry_reader.hpp"
#include "fresh_entries.hpp"
#include "qk/key/cache.hpp"
#include "qk/util/io.hpp"

namespace qk::key {

struct EntryImport::State : EntryReader::Visitor {
    State(int cache_fd, std::string build_name, const Hash128& hash, const ArchiveLimits& limits)
        : cache_fd(cache_fd), build_name(std::move(build_name)), hash(hash), reader(hash, limits, *this)
    {
    }

    // Checked: from here on the archive is kept, in a file of its own: unnamed in .qk/cache until it is
    // linked into place (nothing to remove if the process dies), else named in .qk/cache/tmp.
    Status on_meta(const cache_meta::Parsed& meta) override
    {
        QK_TRY_STATUS(entry_check::room(cache_fd, meta));
        out.reset(::openat(cache_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644));
        if (out.valid())
            return {};
        build.emplace(cache_fd, build_name);
        out.reset(::openat(cache_fd, build_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
        if (!out.valid())
            return sys_error(fmt::format("cannot create {}", build_name));
        return {};
    }
    Status on_terminal(std::string_view bytes) override
    {
        terminal.append(bytes);
        return {};
    }
    Status on_provenance(std::string_view doc) override
    {
        provenance = doc;
        return {};
    }

    Status keep(std::string_view chunk);
    int link_unnamed(const std::string& hex);
    Status commit();
    // Keeps the first error, naming the entry, and removes what was written at once (not when the import
    // is dropped, which a caller may do late).
    void fail(const Error& e)
    {
        failed = with_message(e, fmt::format("cannot import cache entry {}: {}", hash.hex(), e.message));
        out.reset();
        build.reset();
    }

    int cache_fd;
    std::string build_name;
    Hash128 hash;
    EntryReader reader;
    std::optional<Error> failed;  // the first error, returned again by every later call
    std::string provenance;       // for finish()'s acceptance
    std::string terminal;         // for what fresh_entries keeps
    std::string held;             // what arrived before meta.json was read and checked
    std::string archive;          // every byte so far, while it is small enough for fresh_entries to keep
    bool archive_whole = true;
    std::optional<cache_fs::BuildDir> build;
    UniqueFd out;
};

// After the reader has seen the chunk: nothing reaches the disk before meta.json passed its checks.
Status EntryImport::State::keep(std::string_view chunk)
{
    if (archive_whole && archive.size() + chunk.size() <= fresh::max_entry_bytes) {
        archive.append(chunk);
    } else if (archive_whole) {
        archive_whole = false;
        archive = std::string();
    }
    if (!out.valid()) {
        held.append(chunk);
        return {};
    }
    if (!held.empty()) {
        QK_TRY_STATUS(write_all(out.get(), held));
        held = std::string();
    }
    return write_all(out.get(), chunk);
}

// The unnamed file linked in as `hex`: 0, or the errno. Through /proc (no capability needed), else by
// AT_EMPTY_PATH (CAP_DAC_READ_SEARCH), else copied to a named file in .qk/cache/tmp and renamed.
int EntryImport::State::link_unnamed(const std::string& hex)
{
    const std::string proc = fmt::format("/proc/self/fd/{}", out.get());
    if (::linkat(AT_FDCWD, proc.c_str(), cache_fd, hex.c_str(), AT_SYMLINK_FOLLOW) == 0)
        return 0;
    if (errno != ENOENT)
        return errno;
    if (::linkat(out.get(), "", cache_fd, hex.c_str(), AT_EMPTY_PATH) == 0)
        return 0;
    if (errno != ENOENT && errno != EPERM)
        return errno;
    build.emplace(cache_fd, build_name);
    UniqueFd named(::openat(cache_fd, build_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!named.valid())
        return errno;
    if (Status copied = cache_fs::copy_data(out.get(), named.get(), build_name); !copied)
        return copied.error().sys_errno != 0 ? copied.error().sys_errno : EIO;
    out = std::move(named);
    return ::renameat2(cache_fd, build_name.c_str(), cache_fd, hex.c_str(), RENAME_NOREPLACE) == 0 ? 0 : errno;
}

Status EntryImport::State::commit()
{
    const std::string hex = hash.hex();
    // Never over an entry: one that appeared meanwhile (a store, another import) is kept, this one dropped.
    int err = 0;
    if (!build)
        err = link_unnamed(hex);
    else if (::renameat2(cache_fd, build_name.c_str(), cache_fd, hex.c_str(), RENAME_NOREPLACE) != 0)
        err = errno;
    if (err == EEXIST)
        return {};
    if (err != 0)
        return sys_error(fmt::format("cannot put the archive in place as {}", hex), err);
    if (build)
        build->committed();
    // As it stands in place now (a link or a rename changes its ctime): what find() and restore() compare.
    struct stat st {};
    if (archive_whole && ::fstat(out.get(), &st) == 0) {
        CacheHit hit = reader.meta().hit;
        hit.terminal_output = std::move(terminal);
        hit.provenance = std::move(provenance);
        fresh::keep(hex, st, std::move(archive), std::move(hit));
    }
    return {};
}

EntryImport::EntryImport(std::unique_ptr<State> s) : s_(std::move(s)) {}
EntryImport::~EntryImport() = default;
EntryImport::EntryImport(EntryImport&&) noexcept = default;
EntryImport& EntryImport::operator=(EntryImport&&) noexcept = default;

Status EntryImport::write(std::string_view chunk)
{
    State& s = *s_;
    if (!s.failed) {
        Status st = s.reader.write(chunk);
        if (st)
            st = s.keep(chunk);
        if (!st)
            s.fail(st.error());
    }
    return s.failed ? Status(*s.failed) : Status();
}

Status EntryImport::finish(const Accept& accept)
{
    State& s = *s_;
    if (!s.failed)
        if (Status st = s.reader.finish(); !st)
            s.fail(st.error());
    if (!s.failed && accept)
        if (Status st = accept(s.provenance); !st)
            s.fail(st.error());
    if (!s.failed)
        if (Status st = s.commit(); !st)
            s.fail(st.error());
    s.out.reset();
    s.build.reset();
    return s.failed ? Status(*s.failed) : Status();
}

EntryImport LocalCache::begin_import(const Hash128& hash, const ArchiveLimits& limits)
{
    return EntryImport(std::make_unique<EntryImport::State>(dir_fd_.get(), tmp_name(hash.hex()), hash, limits));
}

Status LocalCache::import_entry(const Hash128& hash, int fd, const ArchiveLimits& limits)
{
    EntryImport import = begin_import(hash, limits);
    std::string buf(entry_archive::chunk_size, '\0');
    for (;;) {
        ssize_t n = retry_eintr([&] { return ::read(fd, buf.data(), buf.size()); });
        if (n < 0)
            return sys_error(fmt::format("cannot read the archive of cache entry {}", hash.hex()));
        if (n == 0)
            return import.finish();
        QK_TRY_STATUS(import.write(std::string_view(buf.data(), static_cast<std::size_t>(n))));
    }
}

}  // namespace qk::key
