// TaskHistory: the parts of each task's last stored key (every file with its hash, the command, the
// dependencies' keys...), kept in the cache so that a run that finds no entry for a task's key can say
// which declared input moved it: "input app/src/main.ts changed".
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "qk/key/file_index.hpp"
#include "qk/key/hash.hpp"
#include "qk/key/task_key.hpp"
#include "qk/util/result.hpp"

namespace qk::key {

struct KeyPart {
    // "input", "command", "dependency", "dependencyInput" (a `^` input's digest), "env", "runtime",
    // "packages", "file", "dependencyOutput"
    std::string kind;
    std::string name;  // a path, a task id, a variable or command; "" for command and packages
    Hash128 hash;
    friend bool operator==(const KeyPart&, const KeyPart&) = default;
};

// The key's parts, sorted by kind and name. `files` must be the index the key was computed from.
std::vector<KeyPart> key_parts(const TaskKey& key, const FileIndex& files);

// What moved a key from `before` to `now`, as a phrase ("input a.ts changed", "its command changed",
// "dependency lib:build changed", "input b.ts was added"), or nullopt when the parts are the same.
std::optional<std::string> first_difference(const std::vector<KeyPart>& before, const std::vector<KeyPart>& now);

// <cache>/tasks: one file per task id.
class TaskHistory {
public:
    // Reads and writes <cache_dir>/tasks, made on the first remember().
    static TaskHistory open(const std::filesystem::path& cache_dir);
    // The parts of the key last stored for `task`, or nullopt (none, or unreadable: it is only a hint).
    std::optional<std::vector<KeyPart>> last(const std::string& task) const;
    Status remember(const std::string& task, const std::vector<KeyPart>& parts);

private:
    explicit TaskHistory(std::filesystem::path dir) : dir_(std::move(dir)) {}
    std::filesystem::path file(const std::string& task) const;
    std::filesystem::path dir_;
};

}  // namespace qk::key
