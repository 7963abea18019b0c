// RemoteCache: a cache entry's bytes moved to and from a server that other machines share, by one of
// two protocols teams already run servers for: Turborepo's remote cache API and Bazel's HTTP cache
// (docs/remote-cache.md). It moves opaque bytes under a key; what an entry holds is the caller's.
//
// Thread safety: a RemoteCache is immutable once made, and each call makes its own HTTP handle, so any
// number of threads may call it at once (one transfer each). make_remote_cache initialises libcurl once
// for the process, the first time it is called, before any thread of its making exists.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "qk/util/result.hpp"
#include "qk/remote/remote_server.hpp"

namespace qk::remote {

enum class Lookup : std::uint8_t { hit, miss };

// Where a GET's body goes, chunk by chunk as it arrives; an Error returned stops the transfer and is
// what get returns. The bytes are only the entry's once get returns hit: a body that turns out
// truncated or tampered has already been partly written, so the sink writes somewhere temporary that
// the caller keeps only on a hit.
using Sink = std::function<Status(std::string_view chunk)>;

// What a PUT sends: `size` bytes that can be read twice from the start (both protocols need a digest of
// the body before its first byte is sent: turbo's signature goes in a header, bazel's address is the
// body's SHA-256). `read_at` fills `buf` from `offset` and returns how many bytes it put there (0 only
// at the end). A file the caller wrote is such a source: file_source.
struct Source {
    std::uint64_t size = 0;
    std::function<Result<std::size_t>(std::uint64_t offset, char* buf, std::size_t len)> read_at;
};

// Told, once for a client, that a request has waited noticeably long: what qk waits for and how long it
// will. Called from the thread making the request.
using Waiting = std::function<void(const std::string& message)>;

// The file open on `fd` (read with pread, so the descriptor's offset is left alone), `size` bytes long.
// The caller keeps `fd` open while the Source is used.
Source file_source(int fd, std::uint64_t size);

class RemoteCache {
public:
    virtual ~RemoteCache() = default;

    // Each call takes an entry's key: lower-case hex, 1 to 128 digits (anything else is an Error, so no
    // key can reach a URL as anything but a name). Errors carry an ErrorKind remote_* saying which fault
    // it was, or the sink's or source's own Error unchanged; messages name the URL without credentials.

    // Whether the server holds the entry (HEAD), without moving it.
    virtual Result<Lookup> exists(std::string_view key) const = 0;
    // The entry's bytes into `sink`, checked (turbo with a signature key: the x-artifact-tag; bazel:
    // the body's SHA-256) before hit is returned: a body that fails the check is remote_tampered.
    virtual Result<Lookup> get(std::string_view key, const Sink& sink) const = 0;
    // Stores `source` as the entry (signed where a signature key is set). A read-only token is
    // remote_forbidden.
    virtual Status put(std::string_view key, const Source& source) const = 0;
    // As put, over an entry the server holds that was refused (corrupt, a bad signature): nothing the
    // server holds is taken to be this entry's, not even a blob at the same address.
    virtual Status replace(std::string_view key, const Source& source) const { return put(key, source); }

    // "turbo http://host:port" (no credentials), for messages.
    virtual std::string describe() const = 0;
};

// The client for `server` (server.url must be set), telling `waiting` (when set) once when a request
// has waited noticeably long. Errors: a URL libcurl cannot parse.
Result<std::unique_ptr<RemoteCache>> make_remote_cache(const RemoteServer& server, Waiting waiting = {});

// Whether `key` is a key RemoteCache takes (lower-case hex, 1 to 128 digits).
bool valid_key(std::string_view key);

}  // namespace qk::remote
