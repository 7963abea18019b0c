// SHA-256 and HMAC-SHA256 over a body that arrives in chunks (nettle), and what the protocols spell
// them as: hex for bazel's addresses, base64 for turbo's x-artifact-tag.
#pragma once

#include <nettle/hmac.h>
#include <nettle/sha2.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "qk/remote/remote_cache.hpp"

namespace qk::remote {

using Digest = std::array<std::uint8_t, SHA256_DIGEST_SIZE>;

class Sha256 {
public:
    Sha256();
    void update(std::string_view bytes);
    Digest finish();  // the digest; the object starts over

private:
    sha256_ctx ctx_{};
};

class HmacSha256 {
public:
    explicit HmacSha256(std::string_view key);
    void update(std::string_view bytes);
    Digest finish();  // the tag; the object starts over with the same key

private:
    hmac_sha256_ctx ctx_{};
};

std::string hex(const Digest& d);
std::string base64(const Digest& d);
std::string sha256_hex(std::string_view bytes);

// Whether two base64 spellings of a digest are the same bytes, padded or not (turbo wrote its tags
// without '=' before 2.0), comparing every character whatever the first difference (no timing hint of
// how much of a forged tag was right).
bool same_base64_digest(std::string_view ours, std::string_view theirs);

// Reads `source` from its start to its end in chunks of 64 KiB, handing each to `each` (the first of a
// put's two passes: its digest before its first byte is sent).
Status read_source(const Source& source, const std::function<void(std::string_view)>& each);

}  // namespace qk::remote
