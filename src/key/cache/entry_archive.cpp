#include "entry_archive.hpp"

#include <fmt/format.h>

namespace qk::key::entry_archive {

namespace {

// Speed over size: an entry is packed after every task that ran, while the run goes on; level 1 costs
// a few percent of size against level 6 and runs several times faster. Inflating is as fast either way.
constexpr int compression_level = Z_BEST_SPEED;
// 15 bits of window, +16: a gzip header and trailer rather than zlib's, for both directions.
constexpr int gzip_window_bits = 15 + 16;

std::string zlib_message(const z_stream& z, int code)
{
    return z.msg ? std::string(z.msg) : fmt::format("zlib error {}", code);
}

}  // namespace

std::string magic_line()
{
    return fmt::format("{}{}\n", magic_prefix, format_version);
}

std::string encode_length(std::uint64_t n)
{
    std::string out(prefix_size, '\0');
    for (std::size_t i = 0; i < prefix_size; ++i)
        out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    return out;
}

std::uint64_t decode_length(std::string_view eight_bytes)
{
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < prefix_size; ++i)
        n |= static_cast<std::uint64_t>(static_cast<unsigned char>(eight_bytes[i])) << (8 * i);
    return n;
}

Error corrupt(std::string message)
{
    return error(std::move(message), ErrorKind::cache_entry_corrupt);
}

GzipWriter::GzipWriter(const ArchiveSink& sink) : sink_(sink)
{
    ready_ = ::deflateInit2(&z_, compression_level, Z_DEFLATED, gzip_window_bits, 8, Z_DEFAULT_STRATEGY) == Z_OK;
}

GzipWriter::~GzipWriter()
{
    if (ready_)
        ::deflateEnd(&z_);
}

Status GzipWriter::run(int flush)
{
    if (!ready_)
        return error("cannot start compressing the cache entry: zlib could not allocate its state");
    for (;;) {
        z_.next_out = out_.data();
        z_.avail_out = static_cast<uInt>(out_.size());
        int rc = ::deflate(&z_, flush);
        if (rc == Z_STREAM_ERROR)
            return error(fmt::format("cannot compress the cache entry: {}", zlib_message(z_, rc)));
        std::size_t produced = out_.size() - z_.avail_out;
        if (produced > 0)
            QK_TRY_STATUS(sink_(std::string_view(reinterpret_cast<const char*>(out_.data()), produced)));
        // Done when deflate had room to spare: all input taken and, on Z_FINISH, the trailer written.
        if (flush == Z_FINISH ? rc == Z_STREAM_END : z_.avail_out != 0)
            return {};
    }
}

Status GzipWriter::write(std::string_view bytes)
{
    // zlib's counts are 32-bit: a larger piece goes in several.
    while (!bytes.empty()) {
        std::size_t n = std::min<std::size_t>(bytes.size(), std::size_t{1} << 30);
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
        z_.avail_in = static_cast<uInt>(n);
        QK_TRY_STATUS(run(Z_NO_FLUSH));
        bytes.remove_prefix(n);
    }
    return {};
}

Status GzipWriter::finish()
{
    z_.next_in = nullptr;
    z_.avail_in = 0;
    return run(Z_FINISH);
}

GzipReader::GzipReader(Consumer consume) : consume_(std::move(consume))
{
    ready_ = ::inflateInit2(&z_, gzip_window_bits) == Z_OK;
}

GzipReader::~GzipReader()
{
    if (ready_)
        ::inflateEnd(&z_);
}

Status GzipReader::write(std::string_view compressed)
{
    if (!ready_)
        return error("cannot start decompressing the cache entry: zlib could not allocate its state");
    if (compressed.empty())
        return {};
    if (ended_)
        return corrupt(fmt::format("{} bytes follow the end of the gzip stream", compressed.size()));
    while (!compressed.empty()) {
        std::size_t n = std::min<std::size_t>(compressed.size(), std::size_t{1} << 30);
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
        z_.avail_in = static_cast<uInt>(n);
        for (;;) {
            z_.next_out = out_.data();
            z_.avail_out = static_cast<uInt>(out_.size());
            int rc = ::inflate(&z_, Z_NO_FLUSH);
            std::size_t produced = out_.size() - z_.avail_out;
            if (produced > 0)
                QK_TRY_STATUS(consume_(std::string_view(reinterpret_cast<const char*>(out_.data()), produced)));
            if (rc == Z_STREAM_END) {
                ended_ = true;
                std::size_t left = z_.avail_in + (compressed.size() - n);
                if (left > 0)
                    return corrupt(fmt::format("{} bytes follow the end of the gzip stream", left));
                return {};
            }
            // Z_BUF_ERROR: no progress without more input, which the next chunk brings.
            if (rc == Z_BUF_ERROR || (rc == Z_OK && z_.avail_in == 0 && z_.avail_out != 0))
                break;
            if (rc != Z_OK)
                return corrupt(fmt::format("the gzip stream is corrupt: {}", zlib_message(z_, rc)));
        }
        compressed.remove_prefix(n);
    }
    return {};
}

}  // namespace qk::key::entry_archive
