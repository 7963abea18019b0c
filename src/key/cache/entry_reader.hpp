// EntryReader: an entry archive (src/key/README.md) read as its compressed bytes arrive, checked as it
// goes, each part handed to a Visitor. The one parser of the format: an import checks a download with it,
// and a packed entry (an archive kept whole in the local cache) is found, restored and exported through
// it, so every reading asks the same questions (the magic line, meta.json by entry_check, each size and
// each file's hash, nothing after the last file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cache_meta.hpp"
#include "entry_archive.hpp"
#include "qk/key/cache_archive.hpp"
#include "qk/key/hash.hpp"
#include "qk/util/result.hpp"

namespace qk::key {

class EntryReader {
public:
    // What a reading does with the parts; each is called once the part is checked, in the archive's
    // order. An Error stops the reading and is returned by write().
    struct Visitor {
        virtual ~Visitor() = default;
        // meta.json, parsed and passed by entry_check::check.
        virtual Status on_meta(const cache_meta::Parsed& /*meta*/) { return {}; }
        virtual Status on_terminal(std::string_view /*bytes*/) { return {}; }
        // The provenance document, checked to be a JSON object ("" for none).
        virtual Status on_provenance(std::string_view /*doc*/) { return {}; }
        // A regular file starts: meta.hit.files[index] (empty files too), then its bytes as they come,
        // then its end, called only when its bytes matched the hash meta.json lists.
        virtual Status on_file(std::size_t /*index*/) { return {}; }
        virtual Status on_data(std::string_view /*bytes*/) { return {}; }
        virtual Status on_file_end() { return {}; }
    };

    EntryReader(const Hash128& hash, const ArchiveLimits& limits, Visitor& visitor);

    // The next compressed bytes.
    Status write(std::string_view compressed);
    // Reads `fd` from its start to its end; with `header_only`, stops once the provenance is read. Each
    // compressed chunk goes to `also` once the reader has taken it (an export sends it on).
    Status read_fd(int fd, bool header_only = false, const ArchiveSink& also = {});
    // The archive is over: an Error unless it ended exactly where its last file does.
    Status finish() const;

    // meta.json, the terminal output and the provenance are read.
    bool header_read() const { return stage_ >= Stage::files; }
    const cache_meta::Parsed& meta() const { return meta_; }
    const std::string& meta_text() const { return meta_text_; }

private:
    enum class Stage { magic, meta_size, meta, terminal_size, terminal, provenance_size, provenance, files, done };

    Status consume(std::string_view bytes);
    Status take_magic(std::string_view& bytes);
    Status take_prefix(std::string_view& bytes);
    Status on_meta();
    Status on_provenance();
    Status stream(std::string_view& bytes);
    Status next_file();

    Hash128 hash_;
    ArchiveLimits limits_;
    Visitor& visitor_;
    entry_archive::GzipReader gzip_;
    Stage stage_ = Stage::magic;
    std::string pending_;     // the magic line, a length prefix, meta.json or provenance, as they gather
    std::uint64_t need_ = 0;  // bytes left of the current part
    cache_meta::Parsed meta_;
    std::string meta_text_;
    std::size_t file_ = 0;  // index in meta_.hit.files of the file being read, or the next one
    bool in_file_ = false;
    Hasher hasher_;
};

}  // namespace qk::key
