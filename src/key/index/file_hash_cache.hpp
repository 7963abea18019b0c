// The persistent file hash cache (<root>/.qk/cache/file-hashes): for each path, what the file looked
// like when it was hashed and the hash, so that a later run re-hashes only files that changed.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "qk/key/hash.hpp"
#include "qk/util/result.hpp"

namespace qk::key {

// What a file looked like when it was hashed; a hash is reused only when all of it is unchanged.
struct FileStamp {
    std::uint64_t size = 0, inode = 0;
    std::int64_t mtime_ns = 0, ctime_ns = 0;
    std::uint32_t mode = 0;  // type and permission bits: a file turned into a link differs

    static FileStamp of(const struct stat& st);
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

struct CachedHash {
    FileStamp stamp;
    Hash128 hash;
    bool valid = false;
};

struct HashCacheEntry {
    std::string_view path;
    const CachedHash* cached;
};

// The cache file as read: absent, ignored (corrupt, truncated, another format or version), or read.
struct HashCacheFile {
    struct Entry {
        std::uint32_t offset, length;  // of the path, in `data`
        CachedHash cached;
    };
    bool present = false;
    bool usable = false;
    std::size_t racy = 0;        // entries dropped as racy
    std::string data;            // the file's bytes
    std::vector<Entry> entries;  // the others, in file order (sorted by path when qk wrote it)

    std::string_view path(const Entry& e) const { return std::string_view(data).substr(e.offset, e.length); }
};

// An entry is racy when its file's mtime is less than this before the cache file's own mtime: the
// file may have changed again within the same timestamp tick after it was hashed (git's "racy git").
inline constexpr std::int64_t racy_window_ns = 2'000'000'000;

// Reads `file`; entries only when the whole file is valid. Never an error: a cache that cannot be read
// is a cache that is empty.
HashCacheFile read_hash_cache(const std::filesystem::path& file);

// Writes the entries (sorted by path) to `file` atomically: a temporary file renamed over it. Creates
// the parent directories; when it creates `<root>/.qk` it also writes `.qk/.gitignore` ("*").
Status write_hash_cache(const std::filesystem::path& root, const std::filesystem::path& file,
                        const std::vector<HashCacheEntry>& entries);

}  // namespace qk::key
