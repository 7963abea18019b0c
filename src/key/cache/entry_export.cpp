// LocalCache::export_entry: an entry find() accepts, written as an archive (entry_archive.hpp); a packed
// entry, which is one, is sent as it lies, checked on the way (cache_packed.hpp). meta.json
// is written again from what find() parsed, so the archive lists exactly what was checked; each file is
// read beneath the entry with O_NOFOLLOW and hashed as it streams, so a copy changed on disk is never sent.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cache_fs.hpp"
#include "cache_meta.hpp"
#include "cache_packed.hpp"
#include "entry_archive.hpp"
#include "qk/key/cache.hpp"
#include "qk/util/io.hpp"

namespace qk::key {

namespace {

using entry_archive::encode_length;

// Streams the cached copy `f` (in `dir`, its parent beneath files/) into `gz`, exactly f.size bytes, and
// returns its hash; a copy of another size or kind is an Error.
Result<Hash128> stream_file(int dir, const CachedFile& f, entry_archive::GzipWriter& gz)
{
    std::string name(cache_fs::name_of(f.path));
    UniqueFd in(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
    struct stat st;
    if (!in.valid() || ::fstat(in.get(), &st) != 0)
        return sys_error(fmt::format("cannot read the cached copy of {}", f.path));
    if (!S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) != f.size)
        return error(fmt::format("the cached copy of {} is not the {}-byte file meta.json lists", f.path, f.size));
    Hasher hasher;
    std::string buf(entry_archive::chunk_size, '\0');
    for (std::uint64_t left = f.size; left > 0;) {
        ssize_t n = retry_eintr([&] { return ::read(in.get(), buf.data(), std::min<std::uint64_t>(left, buf.size())); });
        if (n < 0)
            return sys_error(fmt::format("cannot read the cached copy of {}", f.path));
        if (n == 0)
            return error(fmt::format("the cached copy of {} ended before its {} bytes", f.path, f.size));
        std::string_view piece(buf.data(), static_cast<std::size_t>(n));
        hasher.content(piece);
        QK_TRY_STATUS(gz.write(piece));
        left -= static_cast<std::uint64_t>(n);
    }
    return hasher.digest();
}

}  // namespace

Status LocalCache::export_entry(const Hash128& hash, const ArchiveSink& sink) const
{
    const std::string hex = hash.hex();
    std::string why;
    QK_TRY(found, find(hash, &why));
    if (!found->has_value())
        return Error{fmt::format("no cache entry {} to export{}", hex, why.empty() ? "" : ": " + why), ENOENT};
    const CacheHit& hit = **found;
    auto fail = [&](const Error& e) {
        return with_message(e, fmt::format("cannot export the cache entry of {} ({}): {}", hit.task, hex, e.message));
    };

    CacheRecord record{hit.task, hit.outputs, {}, hit.duration, hit.qk_version, hit.provenance};
    auto meta = cache_meta::write(hash, record, hit.files, hit.terminal_output.size(), hit.created);
    if (!meta)
        return fail(meta.error());
    UniqueFd entry(::openat(dir_fd_.get(), hex.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat kind;
    if (entry.valid() && ::fstat(entry.get(), &kind) == 0 && S_ISREG(kind.st_mode)) {
        // A packed entry is its archive: sent as it lies, every chunk through the checking reader first.
        Status sent = packed::send(entry.get(), hash, sink);
        if (!sent && (sent.error().kind == ErrorKind::cache_entry_corrupt ||
                      sent.error().kind == ErrorKind::cache_entry_unsafe ||
                      sent.error().kind == ErrorKind::cache_entry_version)) {
            remove_entry(hex);
            return fail(error(sent.error().message + ", so the entry was removed", sent.error().kind));
        }
        if (!sent)
            return fail(sent.error());
        return {};
    }
    UniqueFd files(entry.valid() ? ::openat(entry.get(), "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                 : -1);
    if (!files.valid())
        return fail(sys_error(fmt::format("cannot open {}/files", (dir_ / hex).string())));

    entry_archive::GzipWriter gz(sink);
    std::string head = entry_archive::magic_line();
    for (std::string_view part : {std::string_view(*meta), std::string_view(hit.terminal_output),
                                  std::string_view(hit.provenance)}) {
        head += encode_length(part.size());
        QK_TRY_STATUS(gz.write(head));
        QK_TRY_STATUS(gz.write(part));
        head.clear();
    }
    cache_fs::DirCursor from(files.get(), false);
    for (const CachedFile& f : hit.files) {
        if (f.kind != OutputFile::Kind::file)
            continue;
        const cache_fs::OpenedDir& dir = from.open(cache_fs::parent_of(f.path));
        if (!dir.fd.valid())
            return fail(sys_error(fmt::format("cannot open the cached directory of {}", f.path), dir.err));
        auto got = stream_file(dir.fd.get(), f, gz);
        if (!got)
            return fail(got.error());
        if (*got != f.hash) {
            remove_entry(hex);
            return fail(error(fmt::format("the cached copy of {} changed since it was stored, so the entry was "
                                          "removed",
                                          f.path)));
        }
    }
    if (Status s = gz.finish(); !s)
        return fail(s.error());
    return {};
}

Status LocalCache::export_entry(const Hash128& hash, int fd) const
{
    return export_entry(hash, [fd](std::string_view chunk) { return write_all(fd, chunk); });
}

}  // namespace qk::key
