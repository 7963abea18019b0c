// Dep paths and node_modules/.pnpm directory names, after pnpm's @pnpm/dependency-path
// (pnpm/pnpm:packages/dependency-path/src/index.ts @v9.15.9 and @v10.34.5; research §3.3-3.4).
#include "qk/workspace/pnpm_lock.hpp"

#include <nettle/md5.h>
#include <nettle/sha2.h>

#include <algorithm>

namespace qk::workspace {

namespace {

struct SuffixIndex {
    std::size_t peers = std::string_view::npos;
    std::size_t patch_hash = std::string_view::npos;
};

// pnpm's indexOfDepPathSuffix: scans back over balanced parentheses at the end.
SuffixIndex index_of_dep_path_suffix(std::string_view s)
{
    if (s.empty() || s.back() != ')')
        return {};
    int open = 1;
    for (std::size_t i = s.size() - 1; i-- > 0;) {
        if (s[i] == '(')
            --open;
        else if (s[i] == ')')
            ++open;
        else if (open == 0) {
            if (s.substr(i + 1).starts_with("(patch_hash="))
                return {s.find('(', i + 2), i + 1};
            return {i + 1, std::string_view::npos};
        }
    }
    return {};
}

// RFC 4648 base32, lower-case, without padding, as @pnpm/crypto.base32-hash writes it.
std::string base32_lower(const unsigned char* data, std::size_t n)
{
    static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
    std::string out;
    std::uint32_t buffer = 0;
    int bits = 0;
    for (std::size_t i = 0; i < n; ++i) {
        buffer = (buffer << 8) | data[i];
        bits += 8;
        while (bits >= 5) {
            out += alphabet[(buffer >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        out += alphabet[(buffer << (5 - bits)) & 31];
    return out;
}

// pnpm <= 9: createBase32Hash = base32(md5(s)), 26 characters.
std::string md5_base32(std::string_view s)
{
    md5_ctx ctx;
    md5_init(&ctx);
    md5_update(&ctx, s.size(), reinterpret_cast<const std::uint8_t*>(s.data()));
    unsigned char digest[MD5_DIGEST_SIZE];
    md5_digest(&ctx, sizeof digest, digest);
    return base32_lower(digest, sizeof digest);
}

// pnpm >= 10: createShortHash = hex(sha256(s)).substring(0, 32).
std::string sha256_hex32(std::string_view s)
{
    sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_update(&ctx, s.size(), reinterpret_cast<const std::uint8_t*>(s.data()));
    unsigned char digest[SHA256_DIGEST_SIZE];
    sha256_digest(&ctx, sizeof digest, digest);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < 16; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 15];
    }
    return out;
}

}  // namespace

PnpmDepPath parse_dep_path(std::string_view dep_path)
{
    PnpmDepPath out;
    std::size_t at = dep_path.size() > 1 ? dep_path.find('@', 1) : std::string_view::npos;
    if (at == std::string_view::npos) {
        out.name = dep_path;
        return out;
    }
    out.name = dep_path.substr(0, at);
    std::string_view version = dep_path.substr(at + 1);
    SuffixIndex idx = index_of_dep_path_suffix(version);
    std::size_t end = std::min(idx.patch_hash, idx.peers);
    if (idx.patch_hash != std::string_view::npos)
        out.patch_hash = version.substr(
            idx.patch_hash, idx.peers == std::string_view::npos ? std::string_view::npos : idx.peers - idx.patch_hash);
    if (idx.peers != std::string_view::npos)
        out.peers = version.substr(idx.peers);
    out.version = version.substr(0, end);
    return out;
}

std::string_view remove_dep_path_suffix(std::string_view dep_path)
{
    SuffixIndex idx = index_of_dep_path_suffix(dep_path);
    return dep_path.substr(0, std::min(idx.patch_hash, idx.peers));
}

std::optional<std::string> ref_to_dep_path(std::string_view ref, std::string_view alias)
{
    if (ref.starts_with("link:"))
        return std::nullopt;
    if (ref.starts_with('@'))
        return std::string(ref);
    std::size_t at = ref.find('@');
    std::string joined = std::string(alias) + '@';
    joined += ref;
    if (at == std::string_view::npos)
        return joined;
    std::size_t colon = ref.find(':');
    std::size_t paren = ref.find('(');
    if ((colon == std::string_view::npos || at < colon) && (paren == std::string_view::npos || at < paren))
        return std::string(ref);
    return joined;
}

std::string pnpm_dir_name(std::string_view dep_path, const PnpmLayout& layout)
{
    // depPathToFilenameUnescaped: a leading '/' (lockfile v6 style) goes; file: keeps its form, and its
    // ':' becomes '+' below like every reserved character.
    if (!dep_path.starts_with("file:") && dep_path.starts_with('/'))
        dep_path.remove_prefix(1);
    const bool escape_hash = layout.pnpm_major >= 10;
    std::string name;
    name.reserve(dep_path.size());
    for (char c : dep_path) {
        switch (c) {
        case '\\':
        case '/':
        case ':':
        case '*':
        case '?':
        case '"':
        case '<':
        case '>':
        case '|': name += '+'; break;
        case '#': name += escape_hash ? '+' : '#'; break;
        default: name += c;
        }
    }
    if (name.find('(') != std::string::npos) {
        if (name.back() == ')')
            name.pop_back();
        std::string peers;
        peers.reserve(name.size());
        for (std::size_t i = 0; i < name.size(); ++i) {
            if (name[i] == ')' && i + 1 < name.size() && name[i + 1] == '(') {
                peers += '_';
                ++i;
            } else if (name[i] == '(' || name[i] == ')') {
                peers += '_';
            } else {
                peers += name[i];
            }
        }
        name = std::move(peers);
    }
    const bool upper = std::any_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    if (name.size() > layout.max_length || (upper && !name.starts_with("file+"))) {
        const bool sha = layout.pnpm_major >= 10;
        const std::size_t keep_budget = sha ? 33 : 27;  // the hash and its '_'
        const std::size_t keep = layout.max_length > keep_budget ? layout.max_length - keep_budget : 0;
        return name.substr(0, keep) + '_' + (sha ? sha256_hex32(name) : md5_base32(name));
    }
    return name;
}

}  // namespace qk::workspace
