// meta.json of a cache entry: what the entry holds and how to check it is whole. Written with a small
// RFC 8259 writer (qk_key does not link the report writer), read with workspace::parse_json.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qk/key/cache.hpp"

namespace qk::key::cache_meta {

// The document for an entry. Fails only for text JSON cannot carry: a path or pattern that is not UTF-8.
Result<std::string> write(const Hash128& hash, const CacheRecord& record, std::span<const CachedFile> files,
                          std::uint64_t terminal_size, std::string_view created);

struct Parsed {
    CacheHit hit;  // all but terminal_output
    std::uint64_t terminal_size = 0;
};
// Reads a document write() made for `hash`. The Error says what is wrong, for the miss reason.
Result<Parsed> read(std::string_view text, const Hash128& hash);

// warm.json of an entry that keeps its task's warm state (the copies are in warm/ beside files/): kept
// apart from meta.json, so the archive a shared cache carries (meta.json and files/) never holds it.
struct WarmDoc {
    std::string task;
    std::vector<std::string> warm;  // the resolved warm paths it was kept under
    std::vector<CachedFile> files;  // sorted by path
};
Result<std::string> write_warm(const WarmDoc& doc);
Result<WarmDoc> read_warm(std::string_view text);

// Whether `text` can be an entry's provenance document: a JSON object (what else it holds is not ours).
Status check_provenance(std::string_view text);

// The current time as RFC 3339 UTC with milliseconds ("2025-01-31T12:00:00.123Z").
std::string now_utc();

}  // namespace qk::key::cache_meta
