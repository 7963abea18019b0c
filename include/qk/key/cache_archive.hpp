// A cache entry as one byte stream, for a cache shared between machines: LocalCache::export_entry writes
// one, LocalCache::begin_import turns one received in chunks back into an entry, checked whole (every
// path, size and content hash) before it appears. The format is qk's own (src/key/README.md): gzip of a
// magic line, meta.json, terminal.log, an optional provenance document, then each file's bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "qk/util/result.hpp"

namespace qk::key {

// Where an export puts the archive, a chunk at a time; an Error stops the export and is returned by it.
using ArchiveSink = std::function<Status(std::string_view chunk)>;

// What an import accepts before it refuses an archive as corrupt: bounds on what a hostile archive can
// make qk hold in memory (meta.json, provenance) or write to disk (the rest).
struct ArchiveLimits {
    std::uint64_t meta_bytes = std::uint64_t{64} << 20;
    std::uint64_t provenance_bytes = std::uint64_t{16} << 20;
    std::uint64_t terminal_bytes = std::uint64_t{1} << 30;
    std::uint64_t file_bytes = std::uint64_t{64} << 30;  // all the entry's files together
};

// One archive being imported, made by LocalCache::begin_import: the bytes go to write() as they arrive
// (a download's chunks, in order), then finish() puts the entry in place. Until finish() succeeds nothing
// is an entry; an import dropped or failed removes what it built. Errors carry ErrorKind
// cache_entry_corrupt, cache_entry_unsafe or cache_entry_version for what the archive holds, errno for
// what the disk refused; after one, every call returns it again. Uses the LocalCache's descriptors: the
// cache outlives it.
class EntryImport {
public:
    ~EntryImport();
    EntryImport(EntryImport&&) noexcept;
    EntryImport& operator=(EntryImport&&) noexcept;

    Status write(std::string_view chunk);
    // Asked of a whole archive before its entry is put in place, with its provenance document ("" for
    // none): an Error refuses it, and nothing becomes an entry (a reader's trust policy, judged before
    // a kill could leave an entry it refuses for a later run to restore).
    using Accept = std::function<Status(std::string_view provenance)>;
    // The archive is over: refused if it ended early or `accept` refuses it; else the entry is renamed
    // into place (when an entry for the hash appeared meanwhile, it is kept and this one dropped, as
    // store() does).
    Status finish(const Accept& accept = {});

    struct State;

private:
    friend class LocalCache;
    explicit EntryImport(std::unique_ptr<State> s);
    std::unique_ptr<State> s_;
};

}  // namespace qk::key
