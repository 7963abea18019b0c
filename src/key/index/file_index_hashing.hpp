// FileIndex's hashing state, shared by the threads that call hash() and hash_of() at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "file_hash_cache.hpp"
#include "qk/key/file_index.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::key {

struct FileIndex::Hashing {
    // Per file. A caller claims the unhashed files it is asked for under the mutex, hashes them
    // outside it, and publishes them as hashed; a caller needing a file claimed by another waits.
    enum State : std::uint8_t { unhashed, claimed, hashed };

    Hashing(std::size_t files, UniqueFd root)
        : root_fd(std::move(root)), state(new std::atomic<std::uint8_t>[files]), hashes(files), known(files)
    {
        for (std::size_t i = 0; i < files; ++i)
            state[i].store(unhashed, std::memory_order_relaxed);
    }

    UniqueFd root_fd;  // paths are resolved from it: the root's own path may be long or relative
    mutable std::mutex mutex;
    std::condition_variable published;
    std::unique_ptr<std::atomic<std::uint8_t>[]> state;
    std::vector<Hash128> hashes;  // valid where state is hashed
    // What the persistent cache says, then what this run learnt; written under the mutex, read by the
    // claimer of a file outside it (no one else writes a claimed file's entry).
    std::vector<CachedHash> known;
    bool dirty = false;  // the cache file needs writing
    FileIndex::HashCounts counts;
    // Files outside the index that the cache keeps too (outputs checked in place, hash_elsewhere):
    // what the cache file held, and what this run used or learnt, which alone is written back.
    std::map<std::string, CachedHash, std::less<>> elsewhere_read, elsewhere_used;

    struct Outcome {
        Hash128 hash;
        FileStamp stamp;
        bool fresh = false;  // hashed now rather than taken from the cache
        std::optional<Error> failure;
    };
    // Throws a FatalError (a caller's bug) unless `file` was hashed: `what` of it was asked for too early.
    void require_hashed(const std::vector<std::string>& files, std::size_t file, const char* what) const;
    // Takes the entries of the persistent cache for the files of the index (`files`, sorted).
    void adopt(const HashCacheFile& cache, const std::vector<std::string>& files);
    // Hashes the files `mine` (claimed by the caller) into `out`, on worker threads when they are many.
    void hash_claimed(const std::vector<std::string>& files, const std::filesystem::path& root,
                      std::span<const std::uint32_t> mine, std::span<Outcome> out) const;
};

}  // namespace qk::key
