// The pnpm lockfile (pnpm-lock.yaml, lockfileVersion '9.0', written by pnpm 9, 10 and 11) as a package
// model: importers, packages and snapshots; what a set of importers installs, closed over dependencies;
// the node_modules/.pnpm directory of each snapshot and back; a stable text of a package set for keys.
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
#include "qk/util/string_hash.hpp"

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
    const PnpmPackage* find_package(std::string_view id) const;
    const PnpmImporter* find_importer(std::string_view path) const;
    const PnpmPackage& package_of(const PnpmSnapshot& s) const { return packages[s.package]; }
    // The importer whose directory holds `rel_path` (relative to the lockfile's directory), the deepest
    // one where importers nest ("packages/a/e2e" inside "packages/a"), else the root importer; null for a
    // path outside the lockfile's directory.
    const PnpmImporter* importer_holding(std::string_view rel_path) const;
};

// Reads a pnpm lockfile. Errors say file:line:column, what was expected, and what to do. Accepted:
// lockfileVersion 9.x; the single-project form with the root importer's dependencies at top level; pnpm
// 11's two-document form (an env document first).
Result<PnpmLock> parse_pnpm_lock(const std::string& path);
// The same from text; `file` names it in messages.
Result<PnpmLock> parse_pnpm_lock_text(std::string_view text, const std::string& file);

// ---- dep paths (pnpm's @pnpm/dependency-path, v9 semantics) ----

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

// ---- node_modules/.pnpm directory names ----

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

    // Pairs of snapshots whose directories coincide (a hash collision); the first one is indexed.
    const std::vector<std::pair<std::uint32_t, std::uint32_t>>& collisions() const { return collisions_; }

private:
    PnpmLayout layout_;
    std::vector<std::string> dirs_, names_;
    StringMap<std::uint32_t> by_dir_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> collisions_;
};

// ---- what importers install ----

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

// ---- node_modules/.modules.yaml ----

// What pnpm recorded about an install (pnpm 9 writes YAML, pnpm 10 JSON).
struct PnpmModules {
    std::string package_manager;  // "pnpm@9.15.9"
    std::string node_linker;      // "isolated", "hoisted", "pnp"
    std::string virtual_store_dir = ".pnpm";
    PnpmLayout layout;  // from packageManager and virtualStoreDirMaxLength
    std::vector<std::string> hoist_pattern, public_hoist_pattern;
    // depPath or importer dir -> alias -> "private" | "public"
    std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> hoisted_dependencies;
};
Result<PnpmModules> parse_pnpm_modules_yaml(const std::string& path);
Result<PnpmModules> parse_pnpm_modules_yaml_text(std::string_view text, const std::string& file);

}  // namespace qk::workspace
