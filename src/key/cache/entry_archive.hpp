// The entry archive's framing, shared by export and import: the magic line, the length prefixes, and the
// gzip stream around them (zlib, fixed-size buffers whatever the entry's size).
#pragma once

#include <zlib.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "qk/key/cache_archive.hpp"

namespace qk::key::entry_archive {

inline constexpr int format_version = 1;
// The first line of the stream inside the gzip: "qk-cache-entry <version>\n".
inline constexpr std::string_view magic_prefix = "qk-cache-entry ";
std::string magic_line();
// A line longer than this is not a magic line.
inline constexpr std::size_t max_magic_line = 64;

// A length prefix: 8 bytes, little-endian.
inline constexpr std::size_t prefix_size = 8;
std::string encode_length(std::uint64_t n);
std::uint64_t decode_length(std::string_view eight_bytes);

// What export and import read and write at a time.
inline constexpr std::size_t chunk_size = std::size_t{64} * 1024;

// Compresses what write() is given into gzip, handing the compressed bytes to a sink as its buffer fills.
class GzipWriter {
public:
    explicit GzipWriter(const ArchiveSink& sink);
    ~GzipWriter();
    GzipWriter(const GzipWriter&) = delete;
    GzipWriter& operator=(const GzipWriter&) = delete;

    Status write(std::string_view bytes);
    // Ends the stream (its trailer holds the CRC-32 and length) and flushes it to the sink.
    Status finish();

private:
    Status run(int flush);

    const ArchiveSink& sink_;
    z_stream z_{};
    bool ready_ = false;
    std::array<unsigned char, chunk_size> out_;
};

// Inflates gzip given in chunks, handing what comes out to `consume` as each buffer fills. A second gzip
// member or any byte after the stream's end is refused: an archive is exactly one stream.
class GzipReader {
public:
    using Consumer = std::function<Status(std::string_view)>;
    explicit GzipReader(Consumer consume);
    ~GzipReader();
    GzipReader(const GzipReader&) = delete;
    GzipReader& operator=(const GzipReader&) = delete;

    Status write(std::string_view compressed);
    bool ended() const { return ended_; }

private:
    Consumer consume_;
    z_stream z_{};
    bool ready_ = false;
    bool ended_ = false;
    std::array<unsigned char, chunk_size> out_;
};

// An Error of kind cache_entry_corrupt.
Error corrupt(std::string message);

}  // namespace qk::key::entry_archive
