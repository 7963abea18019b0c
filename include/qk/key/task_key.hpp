// A task's cache key: what it holds, part by part, and the hash of it all. The parts are what
// `qk show task` prints and what the sandbox's rules are built from; the hash names the cache entry.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "qk/key/file_index.hpp"
#include "qk/key/hash.hpp"
#include "qk/key/inputs.hpp"
#include "qk/key/outputs.hpp"
#include "qk/util/result.hpp"
#include "qk/workspace/pnpm_closure.hpp"
#include "qk/workspace/task_graph.hpp"

namespace qk::key {

struct KeyFile {
    std::string path;  // workspace-relative
    Hash128 hash;
};

// The files one fileset group of the inputs selects (indices into the FileIndex, sorted), shared
// between the keys of every task that expands the same group for the same project.
struct KeyGroup {
    std::size_t fileset = 0;  // index into TaskKey::inputs.filesets
    std::shared_ptr<const std::vector<std::uint32_t>> files;
    Hash128 hash;  // of the paths and contents
};

// A file the key holds only by what it changes or resolves to: nx.json (what it extends,
// nx.local.json), the project's project.json and project.local.json, pnpm-workspace.yaml, a pnpm
// lockfile, the root package.json outside the root project. `what` says which part counts.
struct KeyEffectFile {
    std::string path;
    std::string what;
    Hash128 hash;  // of that part, as resolved
};

struct KeyJsonFile {
    std::string path;
    std::vector<std::string> fields, exclude_fields;
    Hash128 hash;  // of the selected fields, canonical (key order and formatting do not count)
    // When `path` is a symbolic link: the regular file it resolves to (absolute, canonical), whose
    // fields the hash holds, so the rules let the task read it there. Empty for a plain file, and for a
    // link that leads to no regular file (dangling, or to a directory), which allows nothing more.
    std::string target;
};

// Which installed packages the key counts (pnpm v9 lockfile at the workspace root).
struct KeyPackages {
    enum class Source : std::uint8_t {
        none,       // no pnpm lockfile: nothing installed is keyed
        importers,  // what the task's project and the root install, closed over dependencies
        named,      // what externalDependencies names, closed over dependencies
    };
    Source source = Source::none;
    std::string lockfile;                    // workspace-relative, "" for none
    std::vector<std::string> importers;      // Source::importers: the importer directories taken
    std::vector<std::string> names;          // Source::named: the names given
    std::shared_ptr<const workspace::PnpmClosure> closure;  // the snapshots counted (null for none)
    Hash128 hash;
};

// A symbolic link the key holds whole (a file an input group selects, or one held always) that
// resolves to a directory: the tree it leads to is keyed too, so that an edit there moves the key, and
// the rules let the task read there. The tree is walked following nested links: one to a directory is
// walked too (each directory once, by device and inode, so a link to an ancestor ends the walk there),
// one to a file keys the file's content, a dangling one its text. .git, .qk and node_modules are
// skipped by name, as the file index skips them; ignore files do not apply. Targets may lie inside or
// outside the workspace; a file the file index holds keeps the index's hash.
struct KeyLinkedTree {
    std::string link;                       // workspace-relative path of the link
    std::string target;                     // the directory it resolves to: absolute, canonical
    std::vector<std::string> targets;       // every directory reached through it: `target` and those of nested
                                            // links to directories (absolute, canonical, sorted, unique)
    std::vector<std::string> target_files;  // files reached through nested links to files (same form)
    // What the tree holds, sorted by path relative to the link: each file's content hash, and each
    // nested link's entry (its text, what it led to, and for a file that file's content hash).
    std::shared_ptr<const std::vector<KeyFile>> files;
    Hash128 hash;  // of `files`, paths and hashes; the part the key folds in, with `link`
};

struct TaskKey {
    std::string task;  // "project:target"
    Hash128 hash;
    Hash128 command_hash;         // how it runs: executor, commands, cwd, env, options, configuration
    std::vector<KeyGroup> groups;  // held whole: what each fileset group of the inputs selects
    std::vector<KeyFile> always;   // held whole whatever the inputs say: the project's package.json,
                                   // the root .gitignore and .nxignore
    std::vector<KeyEffectFile> effect_files;
    std::vector<KeyJsonFile> json_files;
    std::vector<std::pair<std::string, Hash128>> env;      // name, hash of its value (secrets stay out)
    std::vector<std::pair<std::string, Hash128>> runtime;  // command, hash of its output
    KeyPackages packages;
    std::vector<std::pair<std::string, Hash128>> dependency_tasks;  // dependsOn tasks folded in, by id
    std::vector<KeyFile> dependency_outputs;  // dependentTasksOutputFiles matches
    // The held links that lead to directories, sorted by link; shared by every key holding the same
    // link (as a group's files are), so that a key reaching hundreds of dependencies copies pointers.
    std::vector<std::shared_ptr<const KeyLinkedTree>> linked_trees;
    // What each `^` input holds in every project the task's project depends on, directly or not: one
    // digest per input, composed from each dependency's own as a Merkle tree is (dependency_digests.hpp),
    // so a key's work follows the direct dependencies. KeyBuilder::expanded lists their files.
    std::vector<std::pair<std::string, Hash128>> dependency_inputs;
    InputPlan inputs;
    ResolvedOutputs outputs;
};

// Computes keys for the tasks of one graph. Keys fold the keys of the tasks they depend on, so ask
// for a task after its dependencies (TaskGraph order), and, when dependencies run first, after they
// ran: dependentTasksOutputFiles hashes what they wrote.
class KeyBuilder {
public:
    // The lockfile is read here when the workspace root has pnpm-lock.yaml (an error when it is bad).
    static Result<KeyBuilder> create(const workspace::ProjectGraph& graph, const workspace::TaskGraph& tasks,
                                     FileIndex& files);

    // The key of task `i` (an index into tasks.tasks()); its dependencies' keys must exist already.
    // Computing it again (after dependencies ran) replaces the one kept.
    Result<std::shared_ptr<const TaskKey>> key(std::size_t i);
    // Task i's key (computed already) with what its `^` inputs hold in each dependency listed as well:
    // their groups among `groups` and `inputs.filesets`, their JSON selections, variables, commands and
    // linked trees beside the task's own. For what looks at every file (the sandbox's rules, `qk show
    // task`, `qk affected`); its cost follows the transitive closure. The hash is the key's.
    Result<TaskKey> expanded(std::size_t i);
    const TaskKey* computed(std::size_t i) const;
    std::shared_ptr<const TaskKey> shared(std::size_t i) const;
    // The workspace root's pnpm-lock.yaml as read, or null without one.
    const workspace::PnpmLock* lockfile() const;

    struct State;  // the run's shared caches (src/key/key_parts.hpp)

private:
    KeyBuilder() = default;
    Result<std::shared_ptr<TaskKey>> build(std::size_t i, Expansion expansion);
    std::shared_ptr<State> s_;
};

}  // namespace qk::key
