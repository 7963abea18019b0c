#include "qk/key/hash.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "qk/util/unique_fd.hpp"

namespace qk::key {

namespace {

Hash128 from_xxh(XXH128_hash_t h) { return Hash128{h.high64, h.low64}; }

}  // namespace

std::string Hash128::hex() const
{
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(32, '0');
    for (int i = 0; i < 16; ++i) {
        out[15 - i] = digits[(high >> (4 * i)) & 0xf];
        out[31 - i] = digits[(low >> (4 * i)) & 0xf];
    }
    return out;
}

Hash128 hash_bytes(std::string_view bytes) { return from_xxh(XXH3_128bits(bytes.data(), bytes.size())); }

Result<Hash128> hash_file(const std::filesystem::path& path)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid())
        return sys_error("cannot read " + path.string());
    return hash_fd(fd.get(), path.string());
}

Result<Hash128> hash_fd(int fd, std::string_view what)
{
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    std::array<char, std::size_t{64} * 1024> buf;
    for (off_t at = 0;;) {
        ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return sys_error("cannot read " + std::string(what));
        }
        if (n == 0)
            break;
        at += n;
        XXH3_128bits_update(&state, buf.data(), static_cast<std::size_t>(n));
    }
    return from_xxh(XXH3_128bits_digest(&state));
}

std::optional<Hash128> parse_hash(std::string_view hex)
{
    if (hex.size() != 32)
        return std::nullopt;
    Hash128 h;
    for (std::size_t i = 0; i < 32; ++i) {
        char c = hex[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return std::nullopt;
        std::uint64_t& half = i < 16 ? h.high : h.low;
        half = (half << 4) | static_cast<std::uint64_t>(v);
    }
    return h;
}

struct Hasher::State {
    XXH3_state_t xxh;
};

Hasher::Hasher() : s_(std::make_unique<State>()) { XXH3_128bits_reset(&s_->xxh); }
Hasher::~Hasher() = default;
Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;

Hasher& Hasher::field(std::string_view bytes)
{
    field(static_cast<std::uint64_t>(bytes.size()));
    XXH3_128bits_update(&s_->xxh, bytes.data(), bytes.size());
    return *this;
}

Hasher& Hasher::field(const Hash128& h)
{
    std::uint64_t words[2] = {h.high, h.low};
    XXH3_128bits_update(&s_->xxh, words, sizeof words);
    return *this;
}

Hasher& Hasher::field(std::uint64_t n)
{
    XXH3_128bits_update(&s_->xxh, &n, sizeof n);
    return *this;
}

Hasher& Hasher::content(std::string_view bytes)
{
    XXH3_128bits_update(&s_->xxh, bytes.data(), bytes.size());
    return *this;
}

Hash128 Hasher::digest() const { return from_xxh(XXH3_128bits_digest(&s_->xxh)); }

}  // namespace qk::key
