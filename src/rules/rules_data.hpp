// What a task's Rules hold, compiled for judging millions of accesses a second: sets and sorted
// lists for exact paths, compiled globs for patterns, project roots for finding a path's project.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "qk/key/output_files.hpp"
#include "qk/rules/rules.hpp"
#include "qk/workspace/glob.hpp"
#include "qk/util/string_hash.hpp"

namespace qk::rules {

// Looked up by string_view: judging a read allocates nothing for these.
using PathSet = StringSet;
template <class T>
using PathMap = StringMap<T>;

// Globs with a flag for "any positive": a GlobSet of negations alone matches everything, which a
// declaration of only exclusions must not mean.
struct PatternSet {
    std::vector<std::string> patterns;  // as resolved, for describe()
    workspace::GlobSet set;
    bool any_positive = false;
    bool matches(std::string_view path) const { return any_positive && set.matches(path); }
};

struct Rules::Data {
    std::string root;  // absolute, canonical, no trailing '/'
    const workspace::Workspace* ws = nullptr;
    const key::FileIndex* files = nullptr;
    std::shared_ptr<const key::TaskKey> key;
    std::size_t project = 0;
    workspace::NetworkDeclaration network;  // the target's, else the workspace's default

    std::vector<std::string> scratch;
    std::optional<key::OutputSet> outputs;
    PathSet output_directories;
    std::optional<key::OutputSet> warm;
    PathSet always, json_files, dependency_output_files;
    // Where json inputs that are links lead inside the workspace (the files their keyed fields come
    // from), outside .git, .qk and node_modules, which stay open anyway: read as json inputs.
    PathSet json_targets;
    PathMap<std::string> effect_files;  // path -> what part counts
    std::vector<DependencyOutputs> dependency_outputs;
    // Where each dependency's outputs start (their roots), so a read looks up its own directories
    // rather than testing every dependency: a task may depend on hundreds.
    // Keyed by views of the roots' paths, which the shared OutputSets in dependency_outputs hold: a task
    // depending on hundreds copies no path.
    std::unordered_map<std::string_view, std::vector<std::size_t>, StringHash, std::equal_to<>> dependency_roots;
    PatternSet ignore_reads;             // workspace globs
    PatternSet ignore_dependency_reads;  // "^" globs, matched from each dependency project's root
    std::vector<bool> dependency_project;  // by project index: the task's project depends on it

    // Installed packages: reported only with an install to place reads in and a key that does not hold
    // the whole lockfile. `keyed` is every snapshot its key and its dependencies' keys count, plus what
    // the nested workspaces its globs cover install.
    std::shared_ptr<const InstalledPackages> installed;
    std::vector<bool> keyed_packages;
    bool names_packages = false;  // the key counts what externalDependencies names, not its importers
    std::vector<std::string> covered_importers;  // nested workspaces its globs cover, for describe()
    PathSet covered_manifests;  // theirs and those of the projects they link to: read allowed

    // Inputs as Landlock holds them (input_cover.cpp): every input file (FileIndex indices, sorted), the
    // outermost directories allowed whole, and the paths inputs name literally (allowed as the task
    // starts, though they may have appeared since the run started).
    std::vector<std::uint32_t> input_files;
    PathSet whole_input_dirs;
    PathSet literal_inputs;
    // Where declared directory links lead inside the workspace (their trees are keyed whole): read as
    // inputs, nested links' targets included.
    PathSet linked_dirs, linked_files;
    bool under_linked_dir(std::string_view rel) const;
    void cover_inputs();
    bool under_whole_input_dir(std::string_view rel) const;
    bool named_input(std::string_view rel) const;
    // Dotenv files enforce lets the task read (rules_grants.cpp).
    std::vector<std::string> dotenv_files() const;

    std::optional<Verdict> installed_package(std::string_view rel) const;

    // The project whose root holds `rel` most closely.
    std::optional<std::size_t> project_of(std::string_view rel) const;
    // The project whose root is `dir` or holds it most closely: the one the entries of `dir` belong to.
    std::optional<std::size_t> project_holding(std::string_view dir) const;
    // Whether `rel` is the package.json of another project of the workspace.
    bool other_manifest(std::string_view rel) const;
    // Where the task may read and write alike: its scratch directories, outputs and warm paths.
    std::optional<PathClass> writable(std::string_view rel) const;
    bool in_input_group(std::string_view rel) const;
    bool is_dependency_output(std::string_view rel) const;
    bool is_ignored_read(std::string_view rel) const;
};

}  // namespace qk::rules
