// The packed entries this process imported, kept in memory as the archive bytes the import checked, with
// what find() returns of them. The run that fetched an entry then finds it (twice: the fetch, the task's
// lookup) and restores it from those bytes, rather than reading the file back and inflating it three more
// times (docs/benchmarks.md, "A restore from the server at the local restore's cost"). Bounded: an archive
// over 1 MiB, or one past the total, is not kept, and is read from its file as any packed entry is.
//
// An entry is known by its file as it stood once in place (device, inode, change time, size): a file
// removed, replaced or touched since is not this entry, and is read and checked from the disk.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "qk/key/cache.hpp"

namespace qk::key::fresh {

// An archive larger than this is not kept in memory (compressed bytes).
inline constexpr std::size_t max_entry_bytes = std::size_t{1} << 20;
// At most this much is kept at once, in all: what is past it is read from its file.
inline constexpr std::size_t max_total_bytes = std::size_t{64} << 20;

struct Entry {
    std::shared_ptr<const std::string> archive;  // checked whole by the import
    CacheHit hit;                                // what find() returns of it
};

// Keeps the archive imported as `hex`, whose file in place is `st`. Nothing when it would pass the bounds.
void keep(const std::string& hex, const struct stat& st, std::string archive, CacheHit hit);

// The entry kept as `hex` if the file found there now (`st`) is still the one imported.
std::optional<Entry> find(const std::string& hex, const struct stat& st);

// The same, and no longer kept: a restore takes it.
std::optional<Entry> take(const std::string& hex, const struct stat& st);

// `hex` is removed or replaced: what was kept of it goes.
void forget(const std::string& hex);

}  // namespace qk::key::fresh
