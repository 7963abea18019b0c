// Content hashes for cache keys: XXH3-128 (xxhash), with a streaming Hasher whose fields are
// length-prefixed so that no two different sequences of fields hash alike ("ab","c" vs "a","bc").
#pragma once

#include <compare>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "qk/util/result.hpp"

namespace qk::key {

struct Hash128 {
    std::uint64_t high = 0, low = 0;

    // 32 lowercase hex digits, high half first.
    std::string hex() const;
    friend auto operator<=>(const Hash128&, const Hash128&) = default;
};

Hash128 hash_bytes(std::string_view bytes);

// The hash of a file's content. An Error names the file and the errno.
Result<Hash128> hash_file(const std::filesystem::path& path);
// The hash of what `fd` holds, read from its start (pread: its offset does not move); `what` names it
// in an Error.
Result<Hash128> hash_fd(int fd, std::string_view what);
// 32 hex digits as hex() writes them; nullopt for anything else.
std::optional<Hash128> parse_hash(std::string_view hex);

class Hasher {
public:
    Hasher();
    ~Hasher();
    Hasher(Hasher&&) noexcept;
    Hasher& operator=(Hasher&&) noexcept;

    // Appends one field: its length, then its bytes.
    Hasher& field(std::string_view bytes);
    Hasher& field(const Hash128& h);
    Hasher& field(std::uint64_t n);
    // Appends bytes with no length: a Hasher given only content() hashes as hash_bytes() and hash_fd() do,
    // for content that arrives in pieces.
    Hasher& content(std::string_view bytes);
    Hash128 digest() const;

private:
    struct State;
    std::unique_ptr<State> s_;
};

}  // namespace qk::key
