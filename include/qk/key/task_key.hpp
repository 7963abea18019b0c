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
    const TaskKey* computed(std::size_t i) const;
    std::shared_ptr<const TaskKey> shared(std::size_t i) const;
    // The workspace root's pnpm-lock.yaml as read, or null without one.
    const workspace::PnpmLock* lockfile() const;

    struct State;  // the run's shared caches (src/key/key_parts.hpp)

private:
    KeyBuilder() = default;
    std::shared_ptr<State> s_;
};

}  // namespace qk::key
