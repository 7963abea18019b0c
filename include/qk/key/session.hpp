// Session: the workspace as one qk command sees it: the model, the project and task graphs, the file
// index and the key builder, loaded in that order, each pointing into the one before (hence held
// where they cannot move).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "qk/key/file_index.hpp"
#include "qk/key/output_files.hpp"
#include "qk/key/task_key.hpp"
#include "qk/util/result.hpp"
#include "qk/workspace/project_graph.hpp"
#include "qk/workspace/task_graph.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::key {

class Session {
public:
    // Finds the workspace from `start` upward and loads its configuration and project graph.
    static Result<std::unique_ptr<Session>> open(const std::filesystem::path& start);

    // Builds the task graph of `request`, scans the workspace's files and prepares the keys.
    Status plan(const workspace::TaskRequest& request);

    const workspace::Workspace& workspace() const { return *ws_; }
    const workspace::ProjectGraph& graph() const { return *graph_; }
    const workspace::TaskGraph& tasks() const { return *tasks_; }
    FileIndex& files() { return *files_; }
    KeyBuilder& keys() { return *keys_; }
    // Task `i`'s outputs (its computed key's), compiled once for the session: the rules of every task
    // depending on it share them. Safe from several threads at once.
    Result<std::shared_ptr<const OutputSet>> compiled_outputs(std::size_t i);

private:
    std::unique_ptr<workspace::Workspace> ws_;
    std::unique_ptr<workspace::ProjectGraph> graph_;
    std::unique_ptr<workspace::TaskGraph> tasks_;
    std::unique_ptr<FileIndex> files_;
    std::unique_ptr<KeyBuilder> keys_;
    std::mutex outputs_mutex_;
    std::unordered_map<std::size_t, std::shared_ptr<const OutputSet>> outputs_;  // by task, once compiled
};

}  // namespace qk::key
