// node_modules/.pnpm/<dir> -> snapshot: the mapping issue 5 places reads with. Each snapshot's dir is
// computed once with the algorithm of the pnpm major that made the install (research §3.4).
#include "qk/workspace/pnpm_store_index.hpp"

#include <nettle/md5.h>
#include <nettle/sha2.h>

#include <algorithm>

namespace qk::workspace {

namespace {

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

PnpmStoreIndex::PnpmStoreIndex(const PnpmLock& lock, PnpmLayout layout) : layout_(layout)
{
    dirs_.reserve(lock.snapshots.size());
    by_dir_.reserve(lock.snapshots.size());
    for (std::uint32_t i = 0; i < lock.snapshots.size(); ++i) {
        dirs_.push_back(pnpm_dir_name(lock.snapshots[i].key, layout));
        names_.push_back(lock.snapshots[i].name);
        // Two snapshots in one directory (a hash collision): the first is the one indexed.
        by_dir_.emplace(dirs_.back(), i);
    }
}

std::optional<std::uint32_t> PnpmStoreIndex::find(std::string_view dir) const
{
    auto it = by_dir_.find(dir);
    if (it == by_dir_.end())
        return std::nullopt;
    return it->second;
}

std::optional<PnpmStoreIndex::Place> PnpmStoreIndex::place(std::string_view path) const
{
    std::size_t slash = path.find('/');
    if (slash == std::string_view::npos)
        return std::nullopt;
    std::optional<std::uint32_t> snapshot = find(path.substr(0, slash));
    if (!snapshot)
        return std::nullopt;
    std::string_view rest = path.substr(slash + 1);
    constexpr std::string_view nm = "node_modules/";
    if (!rest.starts_with(nm))
        return std::nullopt;
    rest.remove_prefix(nm.size());
    // <name> is one component, or two for a scope.
    std::size_t end = rest.find('/');
    if (!rest.empty() && rest[0] == '@' && end != std::string_view::npos)
        end = rest.find('/', end + 1);
    std::string_view name = rest.substr(0, end);
    if (name.empty() || name == "@" || (name[0] == '@' && name.find('/') == std::string_view::npos))
        return std::nullopt;
    std::string_view inside = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    return Place{*snapshot, name, inside, name == names_[*snapshot]};
}

}  // namespace qk::workspace
