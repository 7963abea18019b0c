// The workspace's pnpm install as the rules see it: which lockfile snapshot each directory of
// node_modules/.pnpm holds, named by the algorithm of the pnpm major that made the install. Loaded once
// per run and shared by every task's rules.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "qk/util/result.hpp"
#include "qk/workspace/pnpm_modules.hpp"
#include "qk/workspace/pnpm_store_index.hpp"

namespace qk::rules {

class InstalledPackages {
public:
    // The install at `root`, or null with `why_none` set when there is nothing to place reads in: no
    // pnpm lockfile, no node_modules/.modules.yaml (nothing installed), or a node-linker with no
    // virtual store (hoisted, pnp). Error: a .modules.yaml that does not parse.
    static Result<std::shared_ptr<const InstalledPackages>> load(const std::filesystem::path& root,
                                                                 const workspace::PnpmLock* lock,
                                                                 std::string* why_none = nullptr);

    const workspace::PnpmLock& lock() const { return *lock_; }
    // The snapshot whose own package.json `rel` (workspace-relative) is:
    // node_modules/.pnpm/<dir>/node_modules/<name>/package.json, <dir> a snapshot's directory and <name>
    // its package. Anything else in node_modules belongs to no package.
    std::optional<std::uint32_t> manifest_of(std::string_view rel) const;
    // The package's name (not the alias it is installed under).
    const std::string& name(std::uint32_t snapshot) const { return lock_->snapshots[snapshot].name; }
    const workspace::PnpmSnapshot& snapshot(std::uint32_t snapshot) const { return lock_->snapshots[snapshot]; }
    // The snapshot whose own package holds the file `rel` (workspace-relative),
    // node_modules/.pnpm/<dir>/node_modules/<name>/<file>, and <file>; nullopt for anything else.
    struct OwnFile {
        std::uint32_t snapshot;
        std::string_view file;
    };
    std::optional<OwnFile> own_file(std::string_view rel) const;

private:
    InstalledPackages(const workspace::PnpmLock* lock, workspace::PnpmModules modules)
        : lock_(lock), modules_(std::move(modules)), index_(*lock, modules_.layout)
    {
    }
    const workspace::PnpmLock* lock_;
    workspace::PnpmModules modules_;
    workspace::PnpmStoreIndex index_;
    std::string prefix_;  // "node_modules/<virtual store dir>/"
};

}  // namespace qk::rules
