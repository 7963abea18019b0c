// The parts of a task key and the caches a run's keys share (src/key/task_key.cpp assembles them).
#pragma once

#include <map>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "qk/key/task_key.hpp"
#include "dependency_digests.hpp"

namespace qk::key {

// A held symbolic link that leads to a directory: its index number (sorting by it sorts by path) and tree.
struct LinkedTreeRef {
    std::uint32_t link;
    std::shared_ptr<const KeyLinkedTree> tree;
};

struct GroupResult {
    std::shared_ptr<const std::vector<std::uint32_t>> files;
    Hash128 hash;
    // The trees that links among the files lead to, resolved once per group; null: none.
    std::shared_ptr<const std::vector<LinkedTreeRef>> trees;
};

struct LinkedTreeWalk;

inline constexpr std::string_view kGraphInput = "";

struct KeyBuilder::State {
    State(const workspace::ProjectGraph& g, const workspace::TaskGraph& t, FileIndex& f)
        : graph(g), tasks(t), files(f)
    {
    }

    const workspace::ProjectGraph& graph;
    const workspace::TaskGraph& tasks;
    FileIndex& files;
    std::unique_ptr<workspace::PnpmLock> lock;
    InputCache inputs;
    std::string lock_path;

    std::mutex mutex;  // guards what follows
    std::vector<std::shared_ptr<const TaskKey>> keys;
    std::unordered_map<std::string, GroupResult> groups;
    // The same by the group object, which a dependency's part shares with every task that depends on
    // it: found without hashing its patterns. Each object is held, so its address names only it.
    std::unordered_map<const FilesetGroup*, std::pair<std::shared_ptr<const FilesetGroup>, GroupResult>> by_group;
    std::map<std::string, Hash128, std::less<>> runtimes;
    std::map<std::string, KeyPackages, std::less<>> package_sets;
    std::optional<std::string> canonical_root;  // the workspace root, realpath'ed when a link first needs it
    // By link (null: it leads to no directory), and the walks by the directory they start from.
    std::unordered_map<std::uint32_t, std::shared_ptr<const KeyLinkedTree>> linked;
    std::unordered_map<std::string, std::shared_ptr<const LinkedTreeWalk>> trees;

    // The files a fileset group selects, and their hash; cached by project and patterns, and by object.
    Result<GroupResult> group(const std::shared_ptr<const FilesetGroup>& shared);
    // The tree the link `file` (a symbolic link of the index) leads to, walked once per run; null when
    // it leads to no directory.
    Result<std::shared_ptr<const KeyLinkedTree>> linked_tree(std::uint32_t file);
    // The output of a runtime input's command, hashed; run once per command per run.
    Result<Hash128> runtime(const std::string& command);
    // The installed packages the task's key counts.
    Result<KeyPackages> packages(const workspace::Task& task, const InputPlan& plan);

    // `^` inputs: what one holds in every dependency of `project`, and one dependency's own part. The
    // input kGraphInput, which no named input or pattern can be, is each dependency's name and root.
    std::unique_ptr<DependencyDigests> digests;
    Result<Hash128> dependency_digest(std::size_t project, const std::string& input)
    {
        return digests->of(project, input);
    }
    Result<Hash128> part_digest(std::size_t project, const std::string& input);
};

Hash128 command_hash(const workspace::Task& task, const workspace::Project& project);
Status always_files(KeyBuilder::State& s, const workspace::Project& project, std::vector<KeyFile>& out);
Status effect_files(KeyBuilder::State& s, const workspace::Task& task, TaskKey& key);
Result<std::vector<KeyJsonFile>> json_files(KeyBuilder::State& s, const JsonInput& in);
Status dependency_outputs(KeyBuilder::State& s, std::size_t task, TaskKey& key);
// Puts the trees `refs` name into the key, sorted by link, each once.
void linked_trees(std::vector<LinkedTreeRef> refs, TaskKey& key);
Hash128 final_hash(const TaskKey& key);

// The fields of a JSON document that `fields` selects, less `exclude_fields` (dot paths; a missing field
// is skipped), as canonical text.
std::string select_json_fields(const workspace::Json& doc, const std::vector<std::string>& fields,
                               const std::vector<std::string>& exclude_fields);

}  // namespace qk::key
