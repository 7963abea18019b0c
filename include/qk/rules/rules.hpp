// Rules: what one task may read and write in the workspace, and why, built from its declarations and
// its key. The single answer to "may this task do this to this path, and if not, which finding is it":
// the audit asks it of every recorded access; enforce will ask it which paths to allow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "qk/key/file_index.hpp"
#include "qk/key/output_files.hpp"
#include "qk/key/task_key.hpp"
#include "qk/rules/installed_packages.hpp"
#include "qk/util/result.hpp"
#include "qk/workspace/glob.hpp"
#include "qk/workspace/project_graph.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::rules {

// The class of a path for one task: why it may be touched, or what touching it is.
enum class PathClass : std::uint8_t {
    outside,            // outside the workspace: qk is not hermetic
    qk_state,           // .qk at the root: qk's cache and state
    node_modules,       // installed packages and what tools keep there
    installed_files,    // written: what a package manager installed in node_modules (held_paths.hpp)
    scratch,            // a scratch directory of the task
    output,             // a declared output of the task
    output_directory,   // a directory a declared output lies in (creating or removing it)
    warm,               // a warm path of the task
    input,              // held whole by an input
    always,             // held whole whatever the inputs say: the project's package.json, .gitignore, .nxignore
    json_input,         // a json input's file (its fields are keyed)
    dependency_output,  // an output of a task it depends on
    covered_manifest,   // the package.json of a nested workspace its globs cover, or of a project it links to
    ignored_read,       // matched by qk:ultracache.ignoreReads
    git,                // in .git: allowed, not keyed
    git_machinery,      // git's configuration and hooks: what git runs (held_paths.hpp); never written
    dotenv,             // a dotenv file: allowed, not keyed
    effect_file,        // held by the key only by effect (nx.json, project.json, the lockfile...)
    manifest,           // another workspace package's package.json
    toolchain,          // version and package managers' configuration (.nvmrc, .npmrc...)
    dependency_project, // a file of a project the task's project depends on
    tsconfig,           // TypeScript configuration
    installed_package,  // an installed package's package.json, the package outside the key
    other,              // anything else in the workspace
};

const char* class_name(PathClass c);

// The finding an access is, as --sandbox-report names its kinds; `none` when the rules allow it.
enum class Finding : std::uint8_t {
    none,
    read_outside_inputs,
    tsconfig_read,
    stray_write,
    unkeyed_read,  // allowed by the sandbox, but no key holds it (.git, dotenv)
    manifest_read,
    toolchain_read,
    dependency_read,
    unkeyed_package,  // allowed: an installed package a key that names its packages leaves out
    hoisted_package,  // allowed: an installed package nothing the task's importers install depends on
    // A connection off the machine that the target's declared network (false, or a list) does not name:
    // enforce gives it no route, or its proxy refuses it. An undeclared network is open: never this.
    undeclared_network,
};

// Whether enforce lets an access that is this finding through: none, an unkeyed read (.git, dotenv
// files), an installed package outside the key (Landlock cannot refuse one store directory while
// node_modules stays open). The one answer to "what enforce refuses"; the audit counts by it.
bool enforce_allows(Finding finding);

struct Verdict {
    PathClass why = PathClass::other;
    Finding finding = Finding::none;
    std::size_t project = 0;   // for dependency_read: index into Workspace::projects()
    std::uint32_t package = 0;  // for the package findings: the lockfile snapshot
    // What enforce lets through: what enforce_allows, and a write in .git.
    bool allowed() const { return enforce_allows(finding) || why == PathClass::git; }
    // The task declares the path itself (an input, a file every key holds, a json input, an output, a
    // warm path, a dependency's output, an ignored read): a read through a link spelled so is allowed
    // where it lands. A path it merely may touch (node_modules, .git) never widens what it may read.
    bool declared() const;
};

// The outputs of a task another depends on, compiled once and shared by the rules of every task that
// depends on it (a task may depend on hundreds, and each of a run's tasks has rules of its own).
struct DependencyOutputs {
    std::string task;
    std::shared_ptr<const key::OutputSet> outputs;
};

// What builds a task's rules: its declarations and key, and where it sits in the run.
struct TaskDeclarations {
    const workspace::Workspace* workspace = nullptr;
    const workspace::ProjectGraph* graph = nullptr;
    const key::FileIndex* files = nullptr;
    std::shared_ptr<const key::TaskKey> key;
    std::size_t project = 0;                   // index into Workspace::projects()
    const workspace::Target* target = nullptr;
    std::vector<std::string> scratch;          // resolved scratch directories (run/scratch.hpp)
    // The outputs of every task it depends on, directly or not.
    std::vector<DependencyOutputs> dependency_outputs;
    // The install reads are placed in (null: no packages are reported), and the packages the keys of the
    // tasks it depends on count, which its key folds.
    std::shared_ptr<const InstalledPackages> installed;
    std::vector<std::shared_ptr<const workspace::PnpmClosure>> dependency_packages;
};

// One path enforce hands Landlock (Rules::grants): a file, or a directory with everything beneath it.
struct Grant {
    enum class Access : std::uint8_t { read, read_write };
    std::string path;  // workspace-relative, "" for the root
    Access access = Access::read;
    bool directory = false;
    PathClass why = PathClass::input;
};

// One line of `qk show task P:T --rules`.
struct RuleLine {
    std::string access;   // "read", "read, write", "create, remove", "reported"
    std::string path;     // a path, a glob, or a description of a set of paths
    std::string why;
};

class Rules {
public:
    // Errors: a warm path or ignoreReads glob that does not compile or leaves the workspace.
    static Result<Rules> build(const TaskDeclarations& task);

    // `path` is absolute and canonical, as a recording gives it.
    Verdict read(std::string_view path) const;
    // A write: opened for writing, created, removed or renamed. `create_or_remove` when that is all it
    // was, which a directory holding an output may see.
    Verdict write(std::string_view path, bool create_or_remove) const;

    // Whether a read `read` allows as an input is allowed by the text of a declaration alone: a literal
    // input, or a directory held whole, naming a file the key does not hold (git-ignored, so no input
    // selects it: a build output of another task). Enforce lets it through; qk report check counts it,
    // since the key does not change when the file does. `path` as for read().
    bool declared_unkeyed(std::string_view path) const;

    // What the target declares of the network (undeclared: open); rules::network_allows judges a host by it.
    const workspace::NetworkDeclaration& network() const;

    // The name of an installed package a Verdict names.
    std::string package_name(std::uint32_t snapshot) const;
    // The install reads are placed in; null when no packages are reported.
    const InstalledPackages* installed() const;

    // The directories its outputs lie in (workspace-relative), parents before children: created as the
    // task starts when missing, and removed again if it leaves them empty.
    std::vector<std::string> output_directories() const;
    // The outputs named whole whose name has no extension ("dist", not "dist/app.js"), sorted: enforce
    // on Linux takes a missing one for a directory and creates it as the task starts, so that Landlock,
    // which allows only what exists, can allow it.
    std::vector<std::string> directory_outputs() const;
    // The same of its warm paths ("qk:warm"): held by Landlock alone, a missing one is made as the task
    // starts too, so that the tool can keep its state there.
    std::vector<std::string> directory_warm_paths() const;
    // The directories tools keep their caches in (node_modules/.cache, .vite, .vitest, .vite-temp), in
    // the node_modules at the workspace root and at the task's project root: held by Landlock alone,
    // which cannot let a task make one there without letting it make packages, a missing one is made
    // as the task starts too (vitest fails where it cannot write node_modules/.vite).
    std::vector<std::string> tool_cache_directories() const;

    // The rules as `qk show task --rules` prints them, most specific first.
    std::vector<RuleLine> describe() const;

    // What enforce allows inside the workspace, as Landlock holds it: the paths of the spec's walk, from
    // the same compiled declarations as read() and write(), walked on disk now (so call it as the task
    // starts). Sorted component by component; nothing under a directory granted at least as widely.
    // Outside the workspace everything stays open, which is the enforcer's to say.
    std::vector<Grant> grants() const;
    // What the overlay binds through from the real workspace, so that writes there land at once: .qk,
    // the task's scratch directories, and in every .git and node_modules the file index met what a task
    // may write there (held_paths.hpp: not git's configuration and hooks, not what was installed).
    std::vector<std::string> pass_through() const;
    // The .git and node_modules directories the file index met: read whole, written only where
    // pass_through() says.
    std::vector<std::string> held_trees() const;

    // The workspace-relative form of an absolute path inside the workspace ("" for the root), or
    // nullopt outside it.
    std::optional<std::string_view> relative(std::string_view path) const;

    struct Data;  // compiled (src/rules/rules_data.hpp)

private:
    Rules() = default;
    Verdict read_relative(std::string_view rel) const;
    Verdict write_relative(std::string_view rel, bool create_or_remove) const;
    std::shared_ptr<const Data> d_;
};

}  // namespace qk::rules
