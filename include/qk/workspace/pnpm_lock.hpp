// The pnpm lockfile (pnpm-lock.yaml, lockfileVersion '9.0', written by pnpm 9, 10 and 11) as a package
// model: importers, packages and snapshots. What a set of importers installs is pnpm_closure.hpp; where
// pnpm puts each snapshot, pnpm_store_index.hpp; dep path syntax, pnpm_dep_path.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::workspace {

// A 1-based position in the lockfile, for messages.
struct PnpmMark {
    std::uint32_t line = 0, column = 0;
};

// An importer's dependency, `alias: {specifier, version}`.
struct PnpmImporterDep {
    std::string specifier;  // the manifest's text: ^1.2.3, workspace:*, npm:is-odd@3.0.1, catalog:
    std::string version;    // the ref: 1.2.3, 1.2.3(react@18.2.0), link:../b, is-odd@3.0.1, file:...
    // Resolved by the parser: the snapshot installed (an index into PnpmLock::snapshots), or for a
    // `link:` ref the directory linked, relative to the lockfile's directory ("packages/b", "." ...).
    std::optional<std::uint32_t> snapshot;
    std::optional<std::string> link;
    PnpmMark mark;
};
using PnpmImporterDeps = std::map<std::string, PnpmImporterDep, std::less<>>;

// One project of the workspace, keyed by its directory relative to the lockfile's ("." is the root).
struct PnpmImporter {
    std::string path;
    PnpmImporterDeps dependencies, dev_dependencies, optional_dependencies;
    std::string publish_directory;
    PnpmMark mark;
};

// `resolution:` of a package: `{integrity}`, `{tarball, integrity?, path?}`, `{type: git, repo, commit,
// path?}` or `{type: directory, directory}`. `text` is every field, sorted, for keys.
struct PnpmResolution {
    std::string integrity, tarball, path, type, repo, commit, directory;
    std::string text;
};

// An entry of `packages:`, keyed by package id: the snapshot key without peer or patch suffix.
struct PnpmPackage {
    std::string id;
    PnpmResolution resolution;
    std::string name, version;  // written only for packages not from a registry
    std::map<std::string, std::string, std::less<>> engines, peer_dependencies;
    std::vector<std::string> optional_peers;  // peerDependenciesMeta: {<name>: {optional: true}}
    std::vector<std::string> cpu, os, libc, bundled_dependencies;
    bool has_bin = false;
    std::string deprecated;
    PnpmMark mark;
};

// An entry of `snapshots:`, keyed by dep path: `name@version`, then an optional `(patch_hash=...)`,
// then the sorted peer groups, which may nest: `react-dom@18.2.0(react@18.2.0)`.
struct PnpmSnapshot {
    std::string key;
    std::string name;           // the package's name (from the key)
    std::string version;        // the version in the key, without suffixes: 1.2.3, https://..., file:...
    std::uint32_t package = 0;  // index of its entry in PnpmLock::packages
    std::map<std::string, std::string, std::less<>> dependencies, optional_dependencies;  // alias -> ref
    std::vector<std::string> transitive_peer_dependencies;
    bool optional = false;
    bool patched = false;
    std::string id;
    // Resolved by the parser: snapshot indices of `dependencies` and `optionalDependencies`, and the
    // `link:` refs among them (alias -> ref), which name no snapshot.
    std::vector<std::uint32_t> dependency_snapshots, optional_dependency_snapshots;
    std::map<std::string, std::string, std::less<>> links;
    PnpmMark mark;
};

struct PnpmSettings {
    std::optional<bool> auto_install_peers, exclude_links_from_lockfile, dedupe_peers, inject_workspace_packages;
    std::size_t peers_suffix_max_length = 1000;
};

struct PnpmPatch {
    std::string hash, path;
};

struct PnpmLock {
    std::string file;              // as given to the parser, for messages
    std::string lockfile_version;  // "9.0"
    PnpmSettings settings;
    std::map<std::string, PnpmImporterDeps, std::less<>> catalogs;  // catalog name -> pkg -> {specifier, version}
    std::map<std::string, std::string, std::less<>> overrides;
    std::map<std::string, PnpmPatch, std::less<>> patched_dependencies;
    std::string package_extensions_checksum, pnpmfile_checksum;
    std::map<std::string, PnpmImporter, std::less<>> importers;
    std::vector<PnpmPackage> packages;    // sorted by id
    std::vector<PnpmSnapshot> snapshots;  // sorted by key; indices into it are stable
    std::map<std::string, std::vector<std::uint32_t>, std::less<>> snapshots_by_name;  // package name -> indices

    std::optional<std::uint32_t> find_snapshot(std::string_view key) const;
    const PnpmImporter* find_importer(std::string_view path) const;
    const PnpmPackage& package_of(const PnpmSnapshot& s) const { return packages[s.package]; }
};

// Reads a pnpm lockfile. Errors say file:line:column, what was expected, and what to do. Accepted:
// lockfileVersion 9.x; the single-project form with the root importer's dependencies at top level; pnpm
// 11's two-document form (an env document first).
Result<PnpmLock> parse_pnpm_lock(const std::string& path);
// The same from text; `file` names it in messages.
Result<PnpmLock> parse_pnpm_lock_text(std::string_view text, const std::string& file);

}  // namespace qk::workspace
