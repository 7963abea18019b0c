// The workspace configuration model: the root, nx.json (with what it extends and nx.local.json), every
// project (package.json, its "nx" field, project.json, project.local.json) and each target resolved as
// Nx resolves it (targetDefaults, the `command` shorthand, package.json scripts), with inputs, outputs
// and named inputs kept as data. It reads configuration and runs nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/util/string_hash.hpp"
#include "qk/workspace/json.hpp"
#include "qk/workspace/network.hpp"

namespace qk::workspace {

// ---------------------------------------------------------------------------------------------------
// One entry of a target's dependsOn, normalised from any of its forms:
//   "build" (this project), "^build" (the project-graph dependencies), "proj:build" (that project, when
//   `proj` names one; otherwise the whole string is a target name with colons), and
//   {target, projects?, dependencies?, params?, options?, inputs?}.
// `target` may be a glob ("build-*"), matched against every target name in the workspace.
struct DependsOn {
    enum class Scope : std::uint8_t { self, dependencies, projects };
    Scope scope = Scope::self;
    std::string target;
    std::vector<std::string> projects;  // Scope::projects: names, globs, tag:x, !exclusions
    std::string params = "ignore";      // "ignore" | "forward"
    std::string options = "ignore";     // "ignore" | "forward"
    std::optional<bool> inputs;         // the edge's `inputs` flag (continuous dependencies)
    Json raw;                           // the entry as written
};

// How a target runs, from its executor and options. Commands are shell command lines (/bin/sh -c).
struct RunSpec {
    enum class Kind : std::uint8_t {
        commands,     // nx:run-commands, and the `command` shorthand
        script,       // nx:run-script: a package.json script, run as `pnpm run` runs it
        noop,         // nx:noop: a target that only has dependsOn
        unsupported,  // any other executor (a JavaScript one qk cannot run): `executor` says which
    };
    Kind kind = Kind::noop;
    std::string executor;
    std::vector<std::string> commands;
    // commands: run side by side (run-commands `parallel`; false for `command`, true by default for
    // `commands`). script: always one after another.
    bool parallel = false;
    // The working directory: workspace-relative ("." is the root). An options.cwd that is absolute or
    // climbs out of the workspace is a `problem` instead.
    std::string cwd = ".";
    // Directories to put first on PATH, in order, workspace-relative (absolute when outside it).
    // run-commands: node_modules/.bin of cwd and each parent up to the root (npm-run-path);
    // script: the project's node_modules/.bin, then the root's (pnpm run in a workspace).
    std::vector<std::string> path_prepend;
    std::vector<std::pair<std::string, std::string>> env;  // run-commands `env`
    std::string env_file;                                   // run-commands `envFile`, as written
    // script: the script's name, and for each command its npm_lifecycle_event (pre<name>, <name>,
    // post<name>: pnpm 9 runs pre/post scripts by default).
    std::string script;
    std::vector<std::string> lifecycle_events;
    // Why the target cannot run, for the runner to report before starting anything ("" when it can):
    // an executor qk cannot run, run-commands without a command, a script package.json lacks.
    std::string problem;
};

// "qk:sandbox": false turns the sandbox off for the target; { "scratch": [...] } names scratch dirs,
// { "network": ... } what it may reach (qk/workspace/network.hpp).
struct SandboxConfig {
    bool enabled = true;
    std::vector<std::string> scratch;  // as written (tokens unresolved)
    // The target's own (or its targetDefaults'), else nx.json's qk.sandbox.network, else undeclared.
    NetworkDeclaration network;
};

// A target of a project, resolved: every configuration layer merged, targetDefaults applied.
struct Target {
    std::string name;
    std::string executor;  // after the `command` shorthand and the nx:noop rule
    Json options;          // object; {workspaceRoot}, {projectRoot}, {projectName} resolved as Nx does
    Json configurations;   // object of objects, tokens resolved likewise
    std::string default_configuration;
    std::vector<DependsOn> depends_on;
    std::optional<Json> inputs;   // the array as written (unexpanded); nullopt: none declared
    std::optional<Json> outputs;  // the array of strings as written; nullopt: none declared
    bool cache = false;           // `cache`, else nx.json's legacy cacheableOperations
    bool continuous = false;
    bool parallelism = true;
    // qk's own keys: accepted and kept; later components give them behaviour.
    SandboxConfig sandbox;
    std::vector<std::string> ultracache_ignore_reads;  // "qk:ultracache": { "ignoreReads": [...] }
    bool has_ultracache = false;
    std::vector<std::string> warm;  // "qk:warm": [...]
    RunSpec run;
    // The targetDefaults key applied ("" when none), and the files that defined the target, lowest
    // layer first (package.json, project.json, project.local.json).
    std::string target_default_key;
    std::vector<std::string> defined_in;
    // Whether the project's own layers name `inputs` / `outputs`: when not, the target takes them from
    // its targetDefaults entry (or Nx's default), and an edit of that entry reaches it (qk report fix).
    bool names_inputs = false, names_outputs = false;
    Json raw;  // the merged configuration, as `nx show project --json` would print it

    // Where to fix it, for messages: "p/a/project.json, or nx.json's targetDefaults \"build\"" ("" when
    // nothing is known).
    std::string configured_in() const;
};

// A project: a directory with a project.json, or a package.json the workspace globs select.
struct Project {
    std::string name;
    std::string root;  // workspace-relative, "." for the root project
    std::string package_name, package_version;  // from its package.json; empty without one
    std::vector<std::string> tags;
    std::vector<std::string> implicit_dependencies;  // as written, "!x" removes an edge
    Json named_inputs;  // object: this project's own namedInputs (they override nx.json's by name)
    std::vector<Target> targets;  // sorted by name
    // The configuration files read, workspace-relative, each present only if it exists.
    std::string package_json, project_json, project_local_json;
    Json package_manifest;  // the parsed package.json (object), null without one
    // The merged configuration with its targets left empty: raw() puts them in from each target's own,
    // so a workspace of 5,000 projects does not hold every target's configuration twice.
    Json raw_without_targets;

    const Target* find_target(std::string_view name) const;
    // The merged configuration (name, root, tags, namedInputs, targets...), as `nx show project --json`.
    Json raw() const;
};

// nx.json's "qk": {"remoteCache": {...}}: the server a workspace shares its tasks' results through. The
// environment's QK_REMOTE_CACHE_* win over each field; a token or a signing key never comes from a file.
struct RemoteCacheConfig {
    std::string url;
    std::string url_at;    // "nx.json:3:12": where url was set, for messages
    std::string protocol;  // as written (src/remote names the protocols and checks it); empty when unset
    std::string protocol_at;
    std::string team;
    std::optional<bool> read_only;
    std::string upload;  // "verified" or "any": which results this workspace's runs share; empty when unset
    std::string trust;   // "verified" or "any": which shared results its runs restore; empty when unset
    // uploadNetwork: whether results of tasks that declare their network are shared; nullopt when unset (yes).
    std::optional<bool> upload_network;
};

// nx.json as qk reads it: the file it extends underneath, nx.local.json on top.
struct NxConfig {
    Json raw;             // the merged object ({} when there is no nx.json)
    Json named_inputs;    // object
    Json target_defaults; // object (record shape)
    std::vector<std::string> cacheable_operations;  // tasksRunnerOptions.default.options (legacy)
    // Run options, from the top level or else tasksRunnerOptions.default.options, as Nx reads them.
    unsigned parallel = 0;    // "parallel": tasks at once; 0 when unset
    bool skip_cache = false;  // "skipNxCache"
    RemoteCacheConfig remote_cache;  // "qk": {"remoteCache": ...}
    // "qk": {"inputsNeverReadAfterRuns": N}: a declared input is listed as never read once N runs
    // recorded with --record held it in the task's key and none read it.
    unsigned inputs_never_read_after_runs = 5;
    // "qk": {"sandbox": {"network": ...}}: the network of every target that declares none of its own.
    NetworkDeclaration network;
};

class Workspace {
public:
    // The workspace root: the nearest directory from `start` upward holding nx.json or
    // pnpm-workspace.yaml. Error when there is none.
    static Result<std::filesystem::path> find_root(const std::filesystem::path& start);
    // Reads the whole configuration of the workspace at `root`. Errors name the file, line and column.
    // `listed`, when given, is every file of the workspace as the file index lists it (ignore files
    // applied, workspace-relative, sorted): projects are discovered among those, as Nx discovers them
    // among the files git does not ignore, and the tree is walked once for both. Without it the tree is
    // walked here, ignore files not applied.
    static Result<Workspace> load(const std::filesystem::path& root, const std::vector<std::string>* listed = nullptr);
    // find_root(start), then load.
    static Result<Workspace> discover(const std::filesystem::path& start);

    const std::filesystem::path& root() const { return root_; }
    const NxConfig& nx() const { return nx_; }
    const std::vector<Project>& projects() const { return projects_; }  // sorted by name
    const Project* find_project(std::string_view name) const;
    std::optional<std::size_t> project_index(std::string_view name) const;
    // The project whose directory holds `relative_path` most closely (nested projects win), if any.
    const Project* project_owning(std::string_view relative_path) const;
    // The project whose root is `root` ("" for the root project), by index: a lookup, for the rules of each
    // of thousands of tasks, which used to build this map each.
    std::optional<std::size_t> project_at(std::string_view root) const;

    // The project and target, or an error naming what is unknown and what exists.
    Result<const Project*> project(std::string_view name) const;
    Result<const Target*> target(std::string_view project, std::string_view target) const;

    // Project selection as Nx's findMatchingProjects: names, globs over names, tag:x, name:x,
    // directory:x (globs over roots), unlabeled words matched as Nx does, and "!x" exclusions in order
    // (a leading exclusion starts from every project). Indices into projects(), sorted.
    Result<std::vector<std::size_t>> match_projects(std::span<const std::string> patterns) const;

    // Named inputs as the hasher sees them for `project`, unexpanded: the implicit
    // default = ["{projectRoot}/**/*"], then nx.json's, then the project's, each replacing by name.
    Json named_inputs_for(const Project& project) const;

    // The workspace-level files the configuration came from, workspace-relative; empty when absent.
    // A key holds them only by effect (spec: "a file the key holds only by what it changes").
    struct Files {
        std::string nx_json, nx_extends, nx_local_json, pnpm_workspace_yaml, root_package_json;
    };
    const Files& files() const { return files_; }
    // The workspace package globs (pnpm-workspace.yaml `packages`, package.json `workspaces`), as written.
    const std::vector<std::string>& package_globs() const { return package_globs_; }

private:
    std::filesystem::path root_;
    NxConfig nx_;
    std::vector<Project> projects_;
    Files files_;
    std::vector<std::string> package_globs_;
    StringMap<std::size_t> by_root_;  // root ("" for ".") -> index into projects_

    friend class WorkspaceLoader;
};

}  // namespace qk::workspace
