// The bazel protocol: Bazel's HTTP cache (/ac/ and /cas/ by SHA-256), as nginx with WebDAV,
// bazel-remote and BuildBuddy serve it. An entry's bytes are a CAS blob, /cas/<sha256 of the bytes>;
// /ac/<sha256 of "qk-entry:" + key> holds a pointer to it, "qk-entry-v1 <sha256> <size>\n". A GET is a
// hit only when the blob's bytes have that digest and size, so a changed body is refused whoever
// changed it. The pointer is no ActionResult: bazel-remote needs --disable_http_ac_validation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http_transfer.hpp"
#include "qk/remote/remote_cache.hpp"

namespace qk::remote {

// What the action cache holds for an entry.
struct CasPointer {
    std::string sha256;  // 64 lower-case hex digits
    std::uint64_t size = 0;
};
std::string format_pointer(const CasPointer& p);
std::optional<CasPointer> parse_pointer(std::string_view text);  // nullopt: not a pointer qk wrote
std::string ac_path(std::string_view key);                         // "/ac/<sha256 of qk-entry:key>"

class BazelCache final : public RemoteCache {
public:
    explicit BazelCache(HttpClient client);

    Result<Lookup> exists(std::string_view key) const override;
    Result<Lookup> get(std::string_view key, const Sink& sink) const override;
    Status put(std::string_view key, const Source& source) const override;
    Status replace(std::string_view key, const Source& source) const override;
    std::string describe() const override;

private:
    // The entry's pointer, or nullopt when the action cache has none (a miss).
    Result<std::optional<CasPointer>> pointer(std::string_view key) const;
    // put, the blob sent even where the server holds one at its address when `replacing`.
    Status store(std::string_view key, const Source& source, bool replacing) const;

    HttpClient client_;
};

}  // namespace qk::remote
