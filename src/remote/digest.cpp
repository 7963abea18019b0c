#include "digest.hpp"

#include <nettle/base64.h>
#include <nettle/memops.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace qk::remote {

namespace {

const auto* bytes_of(std::string_view s) { return reinterpret_cast<const std::uint8_t*>(s.data()); }

std::string_view without_padding(std::string_view s)
{
    while (!s.empty() && s.back() == '=')
        s.remove_suffix(1);
    return s;
}

}  // namespace

Sha256::Sha256() { sha256_init(&ctx_); }

void Sha256::update(std::string_view bytes) { sha256_update(&ctx_, bytes.size(), bytes_of(bytes)); }

Digest Sha256::finish()
{
    Digest d{};
    sha256_digest(&ctx_, d.size(), d.data());
    return d;
}

HmacSha256::HmacSha256(std::string_view key) { hmac_sha256_set_key(&ctx_, key.size(), bytes_of(key)); }

void HmacSha256::update(std::string_view bytes) { hmac_sha256_update(&ctx_, bytes.size(), bytes_of(bytes)); }

Digest HmacSha256::finish()
{
    Digest d{};
    hmac_sha256_digest(&ctx_, d.size(), d.data());
    return d;
}

std::string hex(const Digest& d)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(d.size() * 2);
    for (const std::uint8_t b : d) {
        out += kDigits[b >> 4];
        out += kDigits[b & 0xf];
    }
    return out;
}

std::string base64(const Digest& d)
{
    std::string out(BASE64_ENCODE_RAW_LENGTH(d.size()), '\0');
    base64_encode_raw(out.data(), d.size(), d.data());
    return out;
}

std::string sha256_hex(std::string_view bytes)
{
    Sha256 h;
    h.update(bytes);
    return hex(h.finish());
}

bool same_base64_digest(std::string_view ours, std::string_view theirs)
{
    ours = without_padding(ours);
    theirs = without_padding(theirs);
    // The length of a tag is no secret: every genuine one has the same.
    return ours.size() == theirs.size() && memeql_sec(ours.data(), theirs.data(), ours.size()) != 0;
}

Status read_source(const Source& source, const std::function<void(std::string_view)>& each)
{
    std::vector<char> buf(std::size_t{64} << 10);
    std::uint64_t offset = 0;
    while (offset < source.size) {
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), source.size - offset));
        QK_TRY(got, source.read_at(offset, buf.data(), want));
        if (*got == 0)
            return error(fmt::format("the entry ended after {} of its {} bytes", offset, source.size));
        each(std::string_view(buf.data(), *got));
        offset += *got;
    }
    return {};
}

}  // namespace qk::remote
