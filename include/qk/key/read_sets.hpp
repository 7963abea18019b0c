// Read sets: what a recorded task read that its key does not hold (`qk run-many --record`), each path
// with what it held, saved in the cache under the task's declared key. Several sets can share one key,
// one per distinct set, as ccache's direct mode keeps a manifest per source: a result is restored only
// through a set whose every read still holds what it held.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "qk/key/hash.hpp"
#include "qk/util/json_writer.hpp"
#include "qk/util/result.hpp"

namespace qk::key {

struct RecordedRead {
    std::string path;                // workspace-relative
    std::optional<Hash128> content;  // nullopt: the task looked for it and it did not exist
    friend bool operator==(const RecordedRead&, const RecordedRead&) = default;
};

struct ReadSet {
    std::vector<RecordedRead> reads;  // sorted by path, each once
    Hash128 result;                   // the cache entry of the result stored through it (result_key)
    std::string created;              // when it was saved, RFC 3339 UTC

    Hash128 digest() const;
    // The key of the result stored through this set: the declared key folded with the set's digest.
    Hash128 result_key(const Hash128& declared) const;
};

// `set` as a JSON object {result, created, reads: [{path, hash|null}]}: the manifest's form, which
// `qk show task --json` shows too.
void write_read_set(JsonWriter& w, const ReadSet& set);

// What `path` (workspace-relative) holds now: its content's hash, or nullopt when nothing is there. A
// directory is nullopt too: a read set never names one. An Error when it exists and cannot be read.
Result<std::optional<Hash128>> current_content(const std::filesystem::path& root, const std::string& path);

// The first read of `set` that no longer holds what it held, with how ("changed", "was removed",
// "appeared"), or nullopt when every one matches.
std::optional<std::string> first_changed(const ReadSet& set, const std::filesystem::path& root);

// The manifests under <cache>/read-sets, one file per declared key. The workspace lock keeps runs from
// writing one at once, and no two tasks share a key.
class ReadSetStore {
public:
    static constexpr int schema_version = 1;
    static constexpr std::size_t max_sets = 16;  // per key; the oldest go first

    // Reads and writes <cache_dir>/read-sets, made on the first add().
    static ReadSetStore open(const std::filesystem::path& cache_dir);

    // The sets saved under `declared`, newest first; none without a manifest. A manifest that cannot be
    // read is removed (its results are then plain misses) and the Error says why, for a warning.
    Result<std::vector<ReadSet>> sets(const Hash128& declared) const;
    // Adds `set` (newest) under `declared` for `task`, unless an equal set is there; keeps the others.
    Status add(const Hash128& declared, const std::string& task, ReadSet set);

private:
    explicit ReadSetStore(std::filesystem::path dir);
    std::filesystem::path file(const Hash128& declared) const;
    std::filesystem::path dir_;
    // The manifests present, listed on first use (a run holds the workspace lock: only it adds any).
    struct Listing {
        std::mutex mutex;
        bool read = false;
        std::set<std::string> names;
    };
    std::shared_ptr<Listing> listing_;
};

}  // namespace qk::key
