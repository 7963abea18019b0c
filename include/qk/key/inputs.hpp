// A task's inputs, expanded as Nx's task hasher expands them (named inputs, `^` dependency inputs,
// tokens, object forms) into what the key reads: fileset groups per project, JSON field selections,
// environment variables, runtime commands, named external dependencies, dependency tasks' outputs.
// Pure configuration: it reads no file but the workspace model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/glob.hpp"
#include "qk/workspace/project_graph.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::key {

// One group of file patterns, matched as Nx matches one group ("(no positive || any positive) && no
// negative"). A project group holds the patterns written with {projectRoot} and is matched against the
// files that project owns (not those of a project nested in it); a workspace group holds those written
// with {workspaceRoot} and is matched against every workspace file.
struct FilesetGroup {
    std::optional<std::size_t> project;  // index into Workspace::projects(); nullopt: a workspace group
    std::vector<std::string> patterns;   // tokens resolved, workspace-relative, "!" for a negation
    workspace::GlobSet globs;            // the patterns, each read as a fileset (path or everything under)
    std::string origin;                  // how the task came to it: "production", "^production (b)"
    std::string cache_key;               // the project and the patterns: equal keys select equal files
};

// { "json": file, "fields": [...], "excludeFields": [...] }: only the fields named are keyed.
struct JsonInput {
    std::string pattern;  // workspace-relative file or glob, tokens resolved
    std::vector<std::string> fields, exclude_fields;  // dot paths
    std::string origin;
};

// { "dependentTasksOutputFiles": glob, "transitive": bool }
struct DependentOutputsInput {
    std::string glob;
    bool transitive = false;
};

struct InputPlan {
    // The task's own groups; with the plan expanded (Expansion::full), each dependency's too. Shared: a
    // dependency's groups are expanded once per run and referenced by every task reaching it.
    std::vector<std::shared_ptr<const FilesetGroup>> filesets;
    std::vector<JsonInput> json;
    std::vector<std::string> env;      // variable names, sorted, unique
    std::vector<std::string> runtime;  // shell commands, in order, unique
    // The packages `externalDependencies` names, sorted; nullopt when no input names any (the key then
    // counts what the task's project and the root install). Present and empty: it names none.
    std::optional<std::vector<std::string>> external_dependencies;
    std::vector<DependentOutputsInput> dependent_outputs;
    // The `^` inputs, as written after the caret (a named input, or a fileset), sorted, unique: what each
    // project the task's project depends on, directly or not, holds of them. The key folds one digest per
    // input, composed from each dependency's own (task_key.hpp); an expanded plan lists their groups,
    // JSON selections, variables and commands in the fields above as well.
    std::vector<std::string> dependency_inputs;
};

// Whether a plan lists what its `^` inputs hold in each dependency (for the sandbox's rules, `qk show
// task` and `qk affected`, which look at every file), or only names them (for the key, which folds
// each dependency's digest: its work follows the direct dependencies, not the transitive closure).
enum class Expansion : std::uint8_t { own, full };

// What one `^` input holds for one dependency project: expanded with that project's named inputs.
struct DependencyPart {
    std::vector<std::shared_ptr<const FilesetGroup>> groups;
    std::vector<JsonInput> json;
    std::vector<std::string> env, runtime;
    std::optional<std::string> error;  // why it cannot be expanded (without the task's name)
};

// What the plans of one run share, so that a thousand tasks each reaching hundreds of dependencies
// expand each dependency's `^` inputs and compile their globs once. Thread-safe.
class InputCache {
public:
    const workspace::Json& named_inputs(const workspace::Workspace& ws, std::size_t project);
    Result<workspace::GlobSet> compile(const std::vector<std::string>& patterns);
    // `input` is a named input, or a fileset when it starts with a token.
    std::shared_ptr<const DependencyPart> dependency_part(const workspace::ProjectGraph& graph,
                                                         std::size_t project, const std::string& input);
    const std::vector<std::size_t>& transitive_dependencies(const workspace::ProjectGraph& graph,
                                                            std::size_t project);

private:
    std::mutex mutex_;
    std::map<std::size_t, workspace::Json> named_;  // node-based: references stay valid
    std::unordered_map<std::string, workspace::GlobSet> globs_;
    // By input, then by project index: asked once per dependency of every task, so found without a key
    // made for each question.
    std::unordered_map<std::string, std::vector<std::shared_ptr<const DependencyPart>>> parts_;
    std::map<std::size_t, std::vector<std::size_t>> closures_;
};

// The inputs `target` takes: its own `inputs` as written, or Nx's ["default", "^default"] when it declares
// none.
workspace::Json target_inputs(const workspace::Target& target);

// Expands the inputs of `target` of project `project` (its `inputs`, or ["default", "^default"] when it
// declares none). Errors name the task and the input: an undefined named input, `^` or `projects` inside
// a namedInputs definition, a pattern that starts with neither {projectRoot} nor {workspaceRoot}, an
// object of no known form, a `projects` pattern matching nothing, a bad glob.
Result<InputPlan> plan_inputs(const workspace::ProjectGraph& graph, std::size_t project,
                              const workspace::Target& target, InputCache* cache = nullptr,
                              Expansion expansion = Expansion::full);

}  // namespace qk::key
