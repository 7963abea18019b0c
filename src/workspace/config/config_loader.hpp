// The steps of Workspace::load, one file each: nx.json (config_nx_json.cpp), which directories are
// projects (config_discovery.cpp), a project's configuration layers (config_project.cpp), a target
// resolved into the model (config_target.cpp) and how it runs (config_run.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::workspace {

class WorkspaceLoader {
public:
    static Result<Workspace> load(const std::filesystem::path& root, const std::vector<std::string>* listed);
};

namespace detail {

// A JSON file of the workspace, parsed, when it exists: `*found` says whether it did.
Result<Json> read_optional_json(const std::filesystem::path& root, const std::string& relative, bool* found);

// nx.json, what it extends (shallow, as Nx's readNxJson: {...base, ...nxJson}) and nx.local.json (deep).
Result<NxConfig> read_nx_config(const std::filesystem::path& root, Workspace::Files& files);

struct Discovery {
    std::vector<std::string> package_globs;  // as written
    std::vector<std::string> project_roots;  // workspace-relative, sorted, "." for the root
};
// Reads pnpm-workspace.yaml and the root package.json's `workspaces`, walks the tree (not entering
// node_modules, .git, .qk or .nx), or looks among `listed` (Workspace::load), and returns every directory
// holding a project.json or a package.json the package globs select (and the root when its package.json
// has an "nx" field).
Result<Discovery> discover_projects(const std::filesystem::path& root, const Json& root_package_json,
                                    Workspace::Files& files, const std::vector<std::string>* listed = nullptr);

// A project's configuration layers merged (package.json < project.json < project.local.json), before
// its targets are resolved.
struct RawProject {
    std::string root;
    Json merged;      // name, tags, implicitDependencies, namedInputs, targets (merged JSON), ...
    Json manifest;    // package.json, or null
    std::string package_json, project_json, project_local_json;
    std::map<std::string, std::vector<std::string>> target_files;  // target -> files that define it
};
Result<RawProject> read_project(const std::filesystem::path& root, const std::string& project_root);

// The project's name: its configuration's, else the directory's name in lower case (Nx's
// toProjectName); the root project falls back to the workspace directory's name.
std::string project_name(const RawProject& raw, const std::filesystem::path& workspace_root);

// Resolves every target of `raw` (targetDefaults, tokens, nx:noop) into `project.targets`.
Status resolve_targets(Project& project, const RawProject& raw, const NxConfig& nx,
                       const std::set<std::string, std::less<>>& project_names);

// How the target runs (config_run.cpp).
RunSpec make_run_spec(const Target& target, const Project& project);

}  // namespace detail
}  // namespace qk::workspace
