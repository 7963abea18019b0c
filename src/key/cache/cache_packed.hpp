// A packed entry: `.qk/cache/<hex>` as one regular file holding the entry's archive (src/key/README.md),
// as an import keeps what a server sent. LocalCache's find, restore and export read it through the
// EntryReader, so a packed entry is held to every check an import makes, each time it is used.
#pragma once

#include <string_view>

#include "qk/key/cache.hpp"
#include "qk/key/cache_archive.hpp"
#include "qk/util/result.hpp"

namespace qk::key::packed {

// What find() returns of the packed entry `fd` (its terminal output and provenance with it): meta.json
// passed entry_check and the header read whole. The files' bytes are checked by check_whole().
Result<CacheHit> read_head(int fd, const Hash128& hash);

// The whole archive read and checked (every size and hash, nothing after the last file), and its
// meta.json lists exactly `hit`'s outputs and files (find() read the same file).
Status check_whole(int fd, const CacheHit& hit);

// Writes `hit`'s files into the workspace (`root_fd`) from the archive as it is read again, each file
// once, where it lands, with the outputs' Restorer; directories and links in the list's order.
Status write_out(int fd, const CacheHit& hit, int root_fd);
// The same from an archive in memory that an import of this process checked whole (fresh_entries.hpp).
Status write_out(std::string_view archive, const CacheHit& hit, int root_fd);

// The archive's bytes to `sink` as they lie in the file, each chunk read through a checking reader
// first: an Error for an archive that fails a check, of kind cache_entry_corrupt, cache_entry_unsafe or
// cache_entry_version (what reached the sink then is not an archive); the sink's own Errors as they are.
Status send(int fd, const Hash128& hash, const ArchiveSink& sink);

}  // namespace qk::key::packed
