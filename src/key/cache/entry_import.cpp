// EntryImport: an archive (entry_archive.hpp) turned back into an entry as its bytes arrive. Nothing is
// written until meta.json has been read and every path in it checked (entry_check.hpp); then the entry is
// built in .qk/cache/tmp like store()'s, each file created beneath it with O_NOFOLLOW and checked against
// its size and hash as it streams in, symbolic links made last (nothing is ever opened through them), and
// renamed into place only once the stream has ended exactly where the last file does.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>

#include <fmt/format.h>

#include "cache_fs.hpp"
#include "cache_meta.hpp"
#include "entry_archive.hpp"
#include "entry_check.hpp"
#include "qk/key/cache.hpp"
#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"

namespace qk::key {

using entry_archive::corrupt;

struct EntryImport::State {
    // What the stream holds next, in order.
    enum class Stage { magic, meta_size, meta, terminal_size, terminal, provenance_size, provenance, files, done };

    State(int cache_fd, std::string build_name, const Hash128& hash, const ArchiveLimits& limits)
        : cache_fd(cache_fd), build_name(std::move(build_name)), hash(hash), limits(limits),
          gzip([this](std::string_view bytes) { return consume(bytes); })
    {
    }

    Status consume(std::string_view bytes);
    Status take_prefix(std::string_view& bytes);
    Status on_meta();
    Status on_provenance();
    Status stream_to_file(std::string_view& bytes);
    Status next_file();
    Status close_file();
    Status commit();
    // Keeps the first error, naming the entry, and removes what was built at once (not when the import
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
    ArchiveLimits limits;
    entry_archive::GzipReader gzip;
    std::optional<Error> failed;  // the first error, returned again by every later call

    Stage stage = Stage::magic;
    std::string pending;      // the magic line, a length prefix, meta.json or provenance, as they gather
    std::uint64_t need = 0;   // bytes left of the current part
    cache_meta::Parsed meta;  // from on_meta()
    std::string provenance;   // from on_provenance(), for finish()'s acceptance
    std::string meta_text;

    std::optional<cache_fs::BuildDir> build;
    UniqueFd entry, files;
    std::optional<cache_fs::DirCursor> dirs;
    std::size_t file = 0;  // index in meta.hit.files of the file being written, or the next one
    UniqueFd out;          // terminal.log, then each file
    Hasher hasher;
};

Status EntryImport::State::consume(std::string_view bytes)
{
    while (!bytes.empty()) {
        switch (stage) {
        case Stage::magic: {
            auto end = bytes.find('\n');
            std::size_t n = std::min(end == std::string_view::npos ? bytes.size() : end + 1,
                                     entry_archive::max_magic_line - pending.size());
            pending.append(bytes.substr(0, n));
            bytes.remove_prefix(n);
            if (pending.back() != '\n' && pending.size() < entry_archive::max_magic_line)
                break;
            if (pending == entry_archive::magic_line()) {
                pending.clear();
                stage = Stage::meta_size;
                break;
            }
            if (pending.starts_with(entry_archive::magic_prefix) && pending.back() == '\n')
                return error(fmt::format("the archive's format is \"{}\", this qk reads version {}",
                                         printable(pending.substr(0, pending.size() - 1)), entry_archive::format_version),
                             ErrorKind::cache_entry_version);
            return corrupt("it does not start with qk's magic line: not a qk cache entry archive");
        }
        case Stage::meta_size:
        case Stage::terminal_size:
        case Stage::provenance_size: QK_TRY_STATUS(take_prefix(bytes)); break;
        case Stage::meta:
        case Stage::provenance: {
            std::size_t n = std::min<std::uint64_t>(need, bytes.size());
            pending.append(bytes.substr(0, n));
            bytes.remove_prefix(n);
            need -= n;
            if (need == 0)
                QK_TRY_STATUS(stage == Stage::meta ? on_meta() : on_provenance());
            break;
        }
        case Stage::terminal:
        case Stage::files: QK_TRY_STATUS(stream_to_file(bytes)); break;
        case Stage::done: return corrupt(fmt::format("{} bytes follow the last file", bytes.size()));
        }
    }
    return {};
}

Status EntryImport::State::take_prefix(std::string_view& bytes)
{
    std::size_t n = std::min(bytes.size(), entry_archive::prefix_size - pending.size());
    pending.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
    if (pending.size() < entry_archive::prefix_size)
        return {};
    need = entry_archive::decode_length(pending);
    pending.clear();
    switch (stage) {
    case Stage::meta_size:
        if (need > limits.meta_bytes)
            return corrupt(fmt::format("its meta.json of {} bytes is over the limit of {}", need, limits.meta_bytes));
        stage = Stage::meta;
        return need == 0 ? on_meta() : Status();
    case Stage::terminal_size:
        if (need != meta.terminal_size)
            return corrupt(fmt::format("its terminal.log has {} bytes, meta.json says {}", need, meta.terminal_size));
        stage = Stage::terminal;
        return need == 0 ? next_file() : Status();
    default:
        if (need > limits.provenance_bytes)
            return corrupt(fmt::format("its provenance of {} bytes is over the limit of {}", need,
                                       limits.provenance_bytes));
        stage = Stage::provenance;
        return need == 0 ? on_provenance() : Status();
    }
}

Status EntryImport::State::on_meta()
{
    meta_text = std::move(pending);
    pending.clear();
    auto parsed = cache_meta::read(meta_text, hash);
    if (!parsed)
        return corrupt(parsed.error().message);
    meta = std::move(*parsed);
    QK_TRY_STATUS(entry_check::check(meta, limits));
    QK_TRY_STATUS(entry_check::room(cache_fd, meta));

    // Checked: from here on the entry is built.
    build.emplace(cache_fd, build_name);
    if (::mkdirat(cache_fd, build_name.c_str(), 0755) != 0)
        return sys_error(fmt::format("cannot create {}", build_name));
    entry.reset(::openat(cache_fd, build_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!entry.valid() || ::mkdirat(entry.get(), "files", 0755) != 0)
        return sys_error(fmt::format("cannot create {}/files", build_name));
    files.reset(::openat(entry.get(), "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!files.valid())
        return sys_error(fmt::format("cannot open {}/files", build_name));
    dirs.emplace(files.get(), true);
    for (const CachedFile& f : meta.hit.files) {
        if (f.kind != OutputFile::Kind::directory)
            continue;
        auto dir = cache_fs::open_dir_beneath(files.get(), f.path, true);
        if (!dir.fd.valid())
            return sys_error(fmt::format("cannot create files/{}", f.path), dir.err);
    }
    out.reset(::openat(entry.get(), "terminal.log", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!out.valid())
        return sys_error("cannot create terminal.log");
    stage = Stage::terminal_size;
    return {};
}

Status EntryImport::State::on_provenance()
{
    std::string text = std::move(pending);
    pending.clear();
    if (!text.empty()) {
        if (Status s = cache_meta::check_provenance(text); !s)
            return corrupt(s.error().message);
        QK_TRY_STATUS(cache_fs::write_file_at(entry.get(), "provenance.json", text, 0644));
    }
    provenance = std::move(text);
    file = 0;
    stage = Stage::files;
    return next_file();
}

Status EntryImport::State::stream_to_file(std::string_view& bytes)
{
    std::string_view piece = bytes.substr(0, std::min<std::uint64_t>(need, bytes.size()));
    if (stage == Stage::files)
        hasher.content(piece);
    if (Status s = write_all(out.get(), piece); !s)
        return sys_error(stage == Stage::files ? "cannot write files/" + meta.hit.files[file].path
                                               : std::string("cannot write terminal.log"),
                         s.error().sys_errno);
    bytes.remove_prefix(piece.size());
    need -= piece.size();
    return need == 0 ? next_file() : Status();
}

// The part being written is whole: closes it, then opens the next regular file, passing over empty ones
// (whose bytes, none, are all here already).
Status EntryImport::State::next_file()
{
    if (stage == Stage::terminal) {
        out.reset();
        stage = Stage::provenance_size;
        return {};
    }
    if (out.valid()) {
        QK_TRY_STATUS(close_file());
        ++file;
    }
    for (; file < meta.hit.files.size(); ++file) {
        const CachedFile& f = meta.hit.files[file];
        if (f.kind != OutputFile::Kind::file)
            continue;
        const cache_fs::OpenedDir& dir = dirs->open(cache_fs::parent_of(f.path));
        if (!dir.fd.valid())
            return sys_error(fmt::format("cannot create the directory of files/{}", f.path), dir.err);
        std::string name(cache_fs::name_of(f.path));
        // Readable by us whatever the mode, as store() makes it; restore applies meta.json's mode.
        out.reset(::openat(dir.fd.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                           (f.mode & 0777) | S_IRUSR));
        if (!out.valid())
            return sys_error(fmt::format("cannot create files/{}", f.path));
        hasher = Hasher();
        need = f.size;
        if (need > 0)
            return {};
        QK_TRY_STATUS(close_file());
    }
    stage = Stage::done;
    return {};
}

Status EntryImport::State::close_file()
{
    out.reset();
    const CachedFile& f = meta.hit.files[file];
    if (hasher.digest() != f.hash)
        return corrupt(fmt::format("the bytes of {} do not match its hash in meta.json", f.path));
    return {};
}

Status EntryImport::State::commit()
{
    for (const CachedFile& f : meta.hit.files) {
        if (f.kind != OutputFile::Kind::symlink)
            continue;
        const cache_fs::OpenedDir& dir = dirs->open(cache_fs::parent_of(f.path));
        std::string name(cache_fs::name_of(f.path));
        if (!dir.fd.valid() || ::symlinkat(f.target.c_str(), dir.fd.get(), name.c_str()) != 0)
            return sys_error(fmt::format("cannot create the symbolic link files/{}", f.path),
                             dir.fd.valid() ? errno : dir.err);
    }
    // meta.json last, as store() writes it.
    QK_TRY_STATUS(cache_fs::write_file_at(entry.get(), "meta.json", meta_text, 0644));
    const std::string hex = hash.hex();
    if (::renameat(cache_fd, build_name.c_str(), cache_fd, hex.c_str()) == 0) {
        build->committed();
        return {};
    }
    // An entry for the hash appeared meanwhile (a store, another import): it is kept.
    if (errno == ENOTEMPTY || errno == EEXIST)
        return {};
    return sys_error(fmt::format("cannot rename {} to {}", build_name, hex));
}

EntryImport::EntryImport(std::unique_ptr<State> s) : s_(std::move(s)) {}
EntryImport::~EntryImport() = default;
EntryImport::EntryImport(EntryImport&&) noexcept = default;
EntryImport& EntryImport::operator=(EntryImport&&) noexcept = default;

Status EntryImport::write(std::string_view chunk)
{
    if (!s_->failed) {
        if (Status st = s_->gzip.write(chunk); !st)
            s_->fail(st.error());
    }
    return s_->failed ? Status(*s_->failed) : Status();
}

Status EntryImport::finish(const Accept& accept)
{
    State& s = *s_;
    if (!s.failed && (!s.gzip.ended() || s.stage != State::Stage::done))
        s.fail(corrupt("the archive ends early: it was cut short"));
    if (!s.failed && accept)
        if (Status st = accept(s.provenance); !st)
            s.fail(st.error());
    if (!s.failed) {
        if (Status st = s.commit(); !st)
            s.fail(st.error());
    }
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
