// The task graph: the tasks a run asks for (targets x projects) and every task their dependsOn pulls
// in, transitively, with the edges between them, in an order that runs each task after its
// dependencies. A dependsOn cycle is an error naming the cycle.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/project_graph.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::workspace {

// What a run asks for: `qk run-many -t T1,T2 [-p P1,P2]`, or `qk run P:T` (one target, one project).
struct TaskRequest {
    std::vector<std::string> targets;   // names, in the order given
    std::vector<std::string> projects;  // patterns as Workspace::match_projects takes them; empty: all
    std::vector<std::string> exclude;   // --exclude: patterns of the same kinds, taken out of `projects`
    // qk run P:T names one task: `projects` holds exactly P (a name, not a pattern) and `targets` T;
    // an unknown project or target is an error. Or `task` holds it as written, project:target[:config],
    // read against the workspace (task_address.hpp) and filling `projects`, `targets`, `configuration`.
    bool single_task = false;
    std::string task;
    // The configuration of the requested tasks (-c, or the third part of `task`); a dependency runs with
    // it too when it has one of that name, as in Nx. "": each target's defaultConfiguration.
    std::string configuration;
    // Only the requested tasks, without what their dependsOn pulls in (Nx's --excludeTaskDependencies).
    bool exclude_task_dependencies = false;
};

// A task dependsOn names that the run leaves out (--exclude-task-dependencies): it does not run, but
// what it would write is still what the task depending on it may read.
struct ExcludedTask {
    std::string id;
    std::size_t project = 0;
    const Target* target = nullptr;
    std::string configuration;
};

struct Task {
    std::string id;  // "project:target"
    std::size_t project = 0;  // index into Workspace::projects()
    const Target* target = nullptr;  // points into the Workspace
    std::string configuration;       // the target's defaultConfiguration when it names one; else ""
    std::vector<std::size_t> deps;             // tasks to finish first (indices into TaskGraph::tasks())
    std::vector<std::size_t> continuous_deps;  // continuous tasks started with it, not awaited
    std::vector<std::size_t> dependents;       // tasks that have this one in deps
    bool requested = false;                    // asked for, rather than pulled in by dependsOn
    // With --exclude-task-dependencies: the tasks its dependsOn names, directly or not, that the run
    // leaves out, in id order.
    std::vector<ExcludedTask> excluded_deps;

    const std::string& project_name(const Workspace& ws) const { return ws.projects()[project].name; }
};

class TaskGraph {
public:
    // Errors: no -t target; an unknown project or a pattern matching none; a target no selected project
    // has; a project named explicitly that has none of the targets; a project named in a dependsOn
    // `projects` list that does not exist; a dependsOn cycle ("dependsOn forms a cycle:
    // a:build -> b:build -> a:build"). Tasks point into the Workspace, which must outlive the TaskGraph.
    static Result<TaskGraph> build(const ProjectGraph& graph, const TaskRequest& given);

    // Every task, each after all of its deps (a topological order, deterministic).
    const std::vector<Task>& tasks() const { return tasks_; }
    const Task* find(std::string_view id) const;
    std::optional<std::size_t> index(std::string_view id) const;
    // What the user may want to know about how the request was read (an ambiguous task address).
    const std::vector<std::string>& notes() const { return notes_; }
    // Tasks with no deps, in order.
    std::vector<std::size_t> roots() const;
    // Every task `i` depends on, directly or not, in tasks() order (for dependentTasksOutputFiles).
    std::vector<std::size_t> transitive_deps(std::size_t i) const;

private:
    std::vector<Task> tasks_;
    std::map<std::string, std::size_t, std::less<>> by_id_;
    std::vector<std::string> notes_;
};

}  // namespace qk::workspace
