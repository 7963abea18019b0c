#include "entry_reader.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "entry_check.hpp"
#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"

namespace qk::key {

using entry_archive::corrupt;

EntryReader::EntryReader(const Hash128& hash, const ArchiveLimits& limits, Visitor& visitor)
    : hash_(hash), limits_(limits), visitor_(visitor), gzip_([this](std::string_view bytes) { return consume(bytes); })
{
}

Status EntryReader::write(std::string_view compressed)
{
    return gzip_.write(compressed);
}

Status EntryReader::read_fd(int fd, bool header_only, const ArchiveSink& also)
{
    std::string buf(entry_archive::chunk_size, '\0');
    for (std::uint64_t at = 0;;) {
        ssize_t n = retry_eintr([&] { return ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(at)); });
        if (n < 0)
            return sys_error("cannot read the archive");
        if (n == 0)
            return header_only && header_read() ? Status() : finish();
        std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
        QK_TRY_STATUS(write(chunk));
        if (also)
            QK_TRY_STATUS(also(chunk));
        at += static_cast<std::uint64_t>(n);
        if (header_only && header_read())
            return {};
    }
}

Status EntryReader::finish() const
{
    if (!gzip_.ended() || stage_ != Stage::done)
        return corrupt("the archive ends early: it was cut short");
    return {};
}

Status EntryReader::consume(std::string_view bytes)
{
    while (!bytes.empty()) {
        switch (stage_) {
        case Stage::magic: QK_TRY_STATUS(take_magic(bytes)); break;
        case Stage::meta_size:
        case Stage::terminal_size:
        case Stage::provenance_size: QK_TRY_STATUS(take_prefix(bytes)); break;
        case Stage::meta:
        case Stage::provenance: {
            std::size_t n = std::min<std::uint64_t>(need_, bytes.size());
            pending_.append(bytes.substr(0, n));
            bytes.remove_prefix(n);
            need_ -= n;
            if (need_ == 0)
                QK_TRY_STATUS(stage_ == Stage::meta ? on_meta() : on_provenance());
            break;
        }
        case Stage::terminal:
        case Stage::files: QK_TRY_STATUS(stream(bytes)); break;
        case Stage::done: return corrupt(fmt::format("{} bytes follow the last file", bytes.size()));
        }
    }
    return {};
}

Status EntryReader::take_magic(std::string_view& bytes)
{
    auto end = bytes.find('\n');
    std::size_t n = std::min(end == std::string_view::npos ? bytes.size() : end + 1,
                             entry_archive::max_magic_line - pending_.size());
    pending_.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
    if (pending_.back() != '\n' && pending_.size() < entry_archive::max_magic_line)
        return {};
    if (pending_ == entry_archive::magic_line()) {
        pending_.clear();
        stage_ = Stage::meta_size;
        return {};
    }
    if (pending_.starts_with(entry_archive::magic_prefix) && pending_.back() == '\n')
        return error(fmt::format("the archive's format is \"{}\", this qk reads version {}",
                                 printable(pending_.substr(0, pending_.size() - 1)), entry_archive::format_version),
                     ErrorKind::cache_entry_version);
    return corrupt("it does not start with qk's magic line: not a qk cache entry archive");
}

Status EntryReader::take_prefix(std::string_view& bytes)
{
    std::size_t n = std::min(bytes.size(), entry_archive::prefix_size - pending_.size());
    pending_.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
    if (pending_.size() < entry_archive::prefix_size)
        return {};
    need_ = entry_archive::decode_length(pending_);
    pending_.clear();
    switch (stage_) {
    case Stage::meta_size:
        if (need_ > limits_.meta_bytes)
            return corrupt(fmt::format("its meta.json of {} bytes is over the limit of {}", need_, limits_.meta_bytes));
        stage_ = Stage::meta;
        return need_ == 0 ? on_meta() : Status();
    case Stage::terminal_size:
        if (need_ != meta_.terminal_size)
            return corrupt(fmt::format("its terminal.log has {} bytes, meta.json says {}", need_, meta_.terminal_size));
        stage_ = Stage::terminal;
        return need_ == 0 ? next_file() : Status();
    default:
        if (need_ > limits_.provenance_bytes)
            return corrupt(fmt::format("its provenance of {} bytes is over the limit of {}", need_,
                                       limits_.provenance_bytes));
        stage_ = Stage::provenance;
        return need_ == 0 ? on_provenance() : Status();
    }
}

Status EntryReader::on_meta()
{
    meta_text_ = std::move(pending_);
    pending_.clear();
    auto parsed = cache_meta::read(meta_text_, hash_);
    if (!parsed)
        return corrupt(parsed.error().message);
    meta_ = std::move(*parsed);
    QK_TRY_STATUS(entry_check::check(meta_, limits_));
    stage_ = Stage::terminal_size;
    return visitor_.on_meta(meta_);
}

Status EntryReader::on_provenance()
{
    std::string text = std::move(pending_);
    pending_.clear();
    if (!text.empty())
        if (Status s = cache_meta::check_provenance(text); !s)
            return corrupt(s.error().message);
    QK_TRY_STATUS(visitor_.on_provenance(text));
    file_ = 0;
    stage_ = Stage::files;
    return next_file();
}

Status EntryReader::stream(std::string_view& bytes)
{
    std::string_view piece = bytes.substr(0, std::min<std::uint64_t>(need_, bytes.size()));
    if (stage_ == Stage::files) {
        hasher_.content(piece);
        QK_TRY_STATUS(visitor_.on_data(piece));
    } else {
        QK_TRY_STATUS(visitor_.on_terminal(piece));
    }
    bytes.remove_prefix(piece.size());
    need_ -= piece.size();
    return need_ == 0 ? next_file() : Status();
}

// The part being read is whole: checks it, then starts the next regular file, passing over empty ones
// (whose bytes, none, are all here already).
Status EntryReader::next_file()
{
    if (stage_ == Stage::terminal) {
        stage_ = Stage::provenance_size;
        return {};
    }
    for (;;) {
        if (in_file_) {
            in_file_ = false;
            if (hasher_.digest() != meta_.hit.files[file_].hash)
                return corrupt(
                    fmt::format("the bytes of {} do not match its hash in meta.json", meta_.hit.files[file_].path));
            QK_TRY_STATUS(visitor_.on_file_end());
            ++file_;
        }
        while (file_ < meta_.hit.files.size() && meta_.hit.files[file_].kind != OutputFile::Kind::file)
            ++file_;
        if (file_ == meta_.hit.files.size()) {
            stage_ = Stage::done;
            return {};
        }
        QK_TRY_STATUS(visitor_.on_file(file_));
        in_file_ = true;
        hasher_ = Hasher();
        need_ = meta_.hit.files[file_].size;
        if (need_ > 0)
            return {};
    }
}

}  // namespace qk::key
