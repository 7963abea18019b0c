// What importers install, or what externalDependencies names: a set of snapshots closed over their
// dependencies, and its stable text for a cache key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/pnpm_lock.hpp"

namespace qk::workspace {

struct PnpmClosureOptions {
    bool dev = true;       // importers' devDependencies
    bool optional = true;  // optionalDependencies, of importers and of snapshots
    // Through `link:` to other importers, taking what they install too (their dev dependencies by `dev`).
    // Off, as for Nx's external nodes: a workspace project is a project-graph edge, not a package.
    bool follow_links = false;
};

struct PnpmClosure {
    std::vector<bool> member;            // member[i]: snapshots[i] is in the set
    std::vector<std::string> importers;  // importers whose dependencies were taken, sorted
    std::vector<std::string> links;      // link: targets met (importer dirs or others), sorted
    bool contains(std::uint32_t snapshot) const { return snapshot < member.size() && member[snapshot]; }
    std::size_t size() const;
    std::vector<std::string> keys(const PnpmLock& lock) const;
};

// The snapshots the importers at `paths` install, closed over dependencies. An unknown importer is an
// error (the lockfile is older than the workspace: run pnpm install).
Result<PnpmClosure> importer_closure(const PnpmLock& lock, std::span<const std::string> paths,
                                     const PnpmClosureOptions& options = {});
// The snapshots of the packages `names` names, as externalDependencies does: `name` takes every installed
// version of it (or, failing that, of the package an importer installs under that alias), `name@version`
// those of that version; each closed over dependencies. An unknown name is an error.
Result<PnpmClosure> package_closure(const PnpmLock& lock, std::span<const std::string> names,
                                    const PnpmClosureOptions& options = {});

// A stable text of a package set for a cache key: one line per snapshot, sorted by key,
// "<snapshot key> <integrity>", or the resolution's fields where there is no integrity.
std::string pnpm_key_text(const PnpmLock& lock, const PnpmClosure& set);

}  // namespace qk::workspace
