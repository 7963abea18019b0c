// Where pnpm installs each snapshot: its directory under node_modules/.pnpm, named as the pnpm major
// that made the install names it, and back from a directory to its snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qk/util/string_hash.hpp"
#include "qk/workspace/pnpm_lock.hpp"

namespace qk::workspace {

// What decides the names: the pnpm major that made the install and its virtual-store-dir-max-length,
// both recorded in node_modules/.modules.yaml (`packageManager`, `virtualStoreDirMaxLength`).
struct PnpmLayout {
    int pnpm_major = 9;
    std::size_t max_length = 120;
};

// pnpm's depPathToFilename: `/` and other reserved characters become `+` (and `#` from pnpm 10), peer
// groups `_`; a name longer than max_length or with an upper-case letter keeps a prefix and a hash:
// md5 in base32 up to pnpm 9, sha256 in hex from pnpm 10.
std::string pnpm_dir_name(std::string_view dep_path, const PnpmLayout& layout = {});

// The directory under node_modules/.pnpm of every snapshot, and back.
class PnpmStoreIndex {
public:
    PnpmStoreIndex(const PnpmLock& lock, PnpmLayout layout);

    const PnpmLayout& layout() const { return layout_; }
    const std::string& dir(std::uint32_t snapshot) const { return dirs_[snapshot]; }
    // The snapshot whose directory is `dir` (one path component), if any.
    std::optional<std::uint32_t> find(std::string_view dir) const;

    // A path relative to node_modules/.pnpm, "<dir>/node_modules/<name>[/<rest>]".
    struct Place {
        std::uint32_t snapshot;
        std::string_view name;  // the entry under <dir>/node_modules
        std::string_view rest;  // the path inside it, may be empty
        bool own;               // `name` is the snapshot's own package, not a link to one of its dependencies
    };
    std::optional<Place> place(std::string_view path_in_virtual_store) const;

private:
    PnpmLayout layout_;
    std::vector<std::string> dirs_, names_;
    StringMap<std::uint32_t> by_dir_;
};

}  // namespace qk::workspace
