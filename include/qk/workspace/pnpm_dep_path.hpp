// Dep paths, the keys of a pnpm lockfile's snapshots, as pnpm's @pnpm/dependency-path reads them (v9
// semantics): `name@version`, an optional `(patch_hash=...)`, then peer groups.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace qk::workspace {

struct PnpmDepPath {
    std::string_view name;        // "@babel/core"
    std::string_view version;     // "7.26.9", without patch hash or peers
    std::string_view patch_hash;  // "(patch_hash=...)" or empty
    std::string_view peers;       // "(react@18.2.0)(...)" or empty
};
PnpmDepPath parse_dep_path(std::string_view dep_path);
// The package id: the dep path without patch hash and peers (pnpm's removeSuffix).
std::string_view remove_dep_path_suffix(std::string_view dep_path);
// The dep path a ref names under an alias (pnpm's refToRelative); nullopt for `link:` refs.
std::optional<std::string> ref_to_dep_path(std::string_view ref, std::string_view alias);

}  // namespace qk::workspace
