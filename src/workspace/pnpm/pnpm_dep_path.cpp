// Dep paths, after pnpm's @pnpm/dependency-path
// (pnpm/pnpm:packages/dependency-path/src/index.ts @v9.15.9 and @v10.34.5; research §3.3-3.4).
#include "qk/workspace/pnpm_dep_path.hpp"

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

}  // namespace qk::workspace
