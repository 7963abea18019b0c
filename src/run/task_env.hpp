// The environment a task's commands run in, put together as Nx's run-commands does: the caller's
// environment, the task's identity, node_modules/.bin directories first on PATH, the envFile, `env`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::run {

// What the runner knows of a task beyond its RunSpec.
struct TaskContext {
    std::filesystem::path root;  // the workspace root, absolute
    std::string project, target, configuration;
    std::string package_name, package_version;  // the project's package.json (scripts see them)
    std::vector<std::string> environment;       // the caller's, "K=V"; current_environment() for qk's own
    std::vector<std::pair<std::string, std::string>> extra_env;  // more task variables (NX_TASK_HASH ...)

    std::string id() const { return project + ":" + target; }
};

// "K=V" entries, each name once, in the order first set.
class Environment {
public:
    Environment() = default;
    explicit Environment(const std::vector<std::string>& entries);

    std::optional<std::string_view> get(std::string_view name) const;
    void set(std::string_view name, std::string_view value);
    const std::vector<std::string>& entries() const { return entries_; }

private:
    std::vector<std::string> entries_;
};

// This process's environment, as tasks get it: without the remote cache's settings (QK_REMOTE_CACHE_*).
// Its token and signing key would let a task, hostile or compromised, put entries on the shared server
// that no sandbox verified, and the task needs none of them.
std::vector<std::string> current_environment();

// The environment of the task's commands. In order, each overriding the one before (Nx's processEnv):
// the caller's environment; NX_TASK_TARGET_PROJECT, NX_TASK_TARGET_TARGET (and _CONFIGURATION),
// QK_TASK and `extra_env`; PATH with `path_prepend` first (absolute against the root); the envFile's
// variables that are not set yet (Nx loads it without override), ${VAR} expanded; then `env`, except
// PATH (Nx keeps its node_modules/.bin on PATH whatever `env` says). An Error when the envFile cannot
// be read.
Result<Environment> task_environment(const workspace::RunSpec& run, const TaskContext& task);

// The directory a task's commands run in: `run.cwd` against the root, normalised.
std::filesystem::path task_directory(const workspace::RunSpec& run, const TaskContext& task);

}  // namespace qk::run
