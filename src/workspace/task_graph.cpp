// The task graph, as Nx's ProcessTasks builds it (nx/src/tasks-runner/create-task-graph.ts,
// tasks-runner/utils.ts getDependencyConfigs):
// - the requested tasks: each selected project x each requested target it has;
// - each task's dependsOn, in order: a target name that is a glob takes every matching target name of
//   the workspace; "self" entries add that target of the same project, "projects" entries of each
//   matching project, "dependencies" entries of each project-graph dependency, and a dependency
//   lacking the target passes the entry on to its own dependencies (Nx's dummy tasks). A project
//   without the target is skipped; a task never depends on itself;
// - a continuous dependency is started, not awaited, so it is kept apart and not checked for cycles.
#include "qk/workspace/task_graph.hpp"

#include <algorithm>
#include <deque>
#include <set>

#include <fmt/format.h>

#include "qk/util/edit_distance.hpp"
#include "task_graph_order.hpp"
#include "task_graph_select.hpp"
#include "workspace_match.hpp"

namespace qk::workspace {

namespace {

std::string join(const std::vector<std::string>& v);
std::string where_defined(const Target& t);

struct Builder {
    const ProjectGraph& graph;
    const Workspace& ws;
    std::vector<Task> tasks;
    std::map<std::string, std::size_t, std::less<>> by_id;
    std::deque<std::size_t> pending;
    std::vector<std::string> all_target_names;  // in first-seen order, as Nx's allTargetNames
    std::string configuration;                  // the request's, for every task whose target has it

    Builder(const ProjectGraph& g) : graph(g), ws(g.workspace())
    {
        std::set<std::string, std::less<>> seen;
        for (const auto& p : ws.projects())
            for (const auto& t : p.targets)
                if (seen.insert(t.name).second)
                    all_target_names.push_back(t.name);
    }

    std::size_t task_for(std::size_t project, const Target* target)
    {
        std::string id = fmt::format("{}:{}", ws.projects()[project].name, target->name);
        if (auto it = by_id.find(id); it != by_id.end())
            return it->second;
        Task t;
        t.id = id;
        t.project = project;
        t.target = target;
        if (!configuration.empty() && target->configurations.find(configuration))
            t.configuration = configuration;
        else if (!target->default_configuration.empty() && target->configurations.find(target->default_configuration))
            t.configuration = target->default_configuration;
        tasks.push_back(std::move(t));
        by_id.emplace(id, tasks.size() - 1);
        pending.push_back(tasks.size() - 1);
        return tasks.size() - 1;
    }

    void add_edge(std::size_t from, std::size_t project, const std::string& target_name)
    {
        const Target* target = ws.projects()[project].find_target(target_name);
        if (!target)
            return;
        std::size_t to = task_for(project, target);
        if (to == from)
            return;
        auto& list = target->continuous ? tasks[from].continuous_deps : tasks[from].deps;
        if (std::find(list.begin(), list.end(), to) == list.end())
            list.push_back(to);
    }

    std::vector<std::string> expand_target(const std::string& name) const
    {
        if (!detail::is_glob_pattern(name))
            return {name};
        std::vector<std::string> out;
        for (const auto& t : all_target_names)
            if (detail::glob_matches(name, t))
                out.push_back(t);
        return out;
    }

    // A "dependencies" entry from `project`: each dependency with the target, and through each one
    // without it to its own dependencies.
    void add_dependency_edges(std::size_t from, std::size_t project, const std::string& target_name,
                              std::vector<char>& visited)
    {
        for (std::size_t dep : graph.dependencies(project)) {
            if (ws.projects()[dep].find_target(target_name)) {
                add_edge(from, dep, target_name);
            } else if (!visited[dep]) {
                visited[dep] = 1;
                add_dependency_edges(from, dep, target_name, visited);
            }
        }
    }

    Status process(std::size_t index)
    {
        const std::size_t project = tasks[index].project;
        const Target* target = tasks[index].target;
        for (const auto& d : target->depends_on) {
            std::vector<std::string> names = expand_target(d.target);
            switch (d.scope) {
            case DependsOn::Scope::self:
                // "proj:target" whose proj is no project (the parser then took the whole string for a
                // target of this project) and that names no target of it either: a misspelled project,
                // which Nx refuses too. A plain missing target stays silent, as in Nx.
                if (auto colon = d.target.find(':'); colon != std::string::npos && names.size() == 1 &&
                                                     !ws.projects()[project].find_target(d.target)) {
                    const Target& t = *tasks[index].target;
                    std::vector<std::string> projects;
                    for (const auto& p : ws.projects())
                        projects.push_back(p.name);
                    std::string named = d.target.substr(0, colon);
                    return error(fmt::format("{}: dependsOn names \"{}\", but there is no project \"{}\"{} (nor a "
                                             "target of that name in {}); fix the name in its dependsOn{}",
                                             tasks[index].id, d.target, named, did_you_mean(named, projects),
                                             ws.projects()[project].name, where_defined(t)));
                }
                for (const auto& n : names)
                    add_edge(index, project, n);
                break;
            case DependsOn::Scope::dependencies:
                for (const auto& n : names) {
                    std::vector<char> visited(ws.projects().size(), 0);
                    visited[project] = 1;
                    add_dependency_edges(index, project, n, visited);
                }
                break;
            case DependsOn::Scope::projects: {
                for (const auto& pattern : d.projects) {
                    if (!pattern.empty() && pattern[0] == '!')
                        continue;
                    std::vector<std::string> one{pattern};
                    QK_TRY(hit, ws.match_projects(one));
                    if (hit->empty())
                        return error(fmt::format("{}: dependsOn names the project \"{}\", which matches no project; "
                                                 "fix the name in its dependsOn",
                                                 tasks[index].id, pattern));
                }
                QK_TRY(matched, ws.match_projects(d.projects));
                for (std::size_t q : *matched)
                    for (const auto& n : names)
                        add_edge(index, q, n);
                break;
            }
            }
        }
        return {};
    }
};

// " (in p/a/project.json, or nx.json's targetDefaults \"build\")": where a target's dependsOn may come from.
std::string where_defined(const Target& t)
{
    std::string files = t.configured_in();
    return files.empty() ? std::string() : " (" + files + ")";
}

std::string join(const std::vector<std::string>& v)
{
    std::string out;
    for (const auto& s : v)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

}  // namespace

namespace {

// "target app:build has no configuration \"prod\"; its configurations are: ...", for `qk run` only.
Status check_configuration(const Project& project, const std::string& name, const Target& t, const TaskRequest& request)
{
    if (!request.single_task || request.configuration.empty() || t.configurations.find(request.configuration))
        return {};
    std::vector<std::string> have;
    if (t.configurations.is_object())
        for (const auto& [k, v] : t.configurations.as_object())
            have.push_back(k);
    return error(fmt::format("target {}:{} has no configuration \"{}\"; {}", project.name, name, request.configuration,
                             have.empty() ? std::string("it has none") : "its configurations are: " + join(have)));
}

// The requested tasks: each selected project's requested targets. A project named exactly that has none
// of them, or a request that makes no task at all, is an error naming what there is.
Status add_requested_tasks(Builder& b, const TaskRequest& request, const std::vector<std::size_t>& selected,
                           const std::set<std::size_t>& explicit_projects)
{
    const Workspace& ws = b.ws;
    for (std::size_t p : selected) {
        const Project& project = ws.projects()[p];
        bool any = false;
        for (const auto& name : request.targets) {
            if (const Target* t = project.find_target(name)) {
                QK_TRY_STATUS(check_configuration(project, name, *t, request));
                b.tasks[b.task_for(p, t)].requested = true;
                any = true;
            } else if (request.single_task) {
                return ws.target(project.name, name).error();
            }
        }
        if (!any && explicit_projects.count(p)) {
            std::vector<std::string> have;
            for (const auto& t : project.targets)
                have.push_back(t.name);
            return error(fmt::format("project \"{}\" has no target {}; its targets are: {}", project.name,
                                     request.targets.size() == 1
                                         ? "\"" + request.targets[0] + "\"" + did_you_mean(request.targets[0], have)
                                         : "among " + join(request.targets),
                                     have.empty() ? "none" : join(have)));
        }
    }
    if (!b.tasks.empty())
        return {};
    std::vector<std::string> all = b.all_target_names;
    std::sort(all.begin(), all.end());
    return error(fmt::format("no {}project has a target named {}{}; the workspace's targets are: {}",
                             request.projects.empty() ? "" : "selected ", join(request.targets),
                             request.targets.size() == 1 ? did_you_mean(request.targets[0], all) : "",
                             all.empty() ? "none" : join(all)));
}

// What their dependsOn pulls in, breadth first from the requested tasks.
Status add_dependencies(Builder& b)
{
    while (!b.pending.empty()) {
        std::size_t i = b.pending.front();
        b.pending.pop_front();
        QK_TRY_STATUS(b.process(i));
    }
    return {};
}

// --exclude-task-dependencies: each requested task remembers what it depends on that will not run,
// through left-out tasks.
void remember_excluded_deps(std::vector<Task>& tasks)
{
    for (Task& t : tasks) {
        if (!t.requested)
            continue;
        std::vector<bool> seen(tasks.size(), false);
        std::vector<std::size_t> stack(t.deps.begin(), t.deps.end());
        while (!stack.empty()) {
            std::size_t d = stack.back();
            stack.pop_back();
            if (seen[d] || tasks[d].requested)
                continue;
            seen[d] = true;
            t.excluded_deps.push_back({tasks[d].id, tasks[d].project, tasks[d].target, tasks[d].configuration});
            stack.insert(stack.end(), tasks[d].deps.begin(), tasks[d].deps.end());
        }
        std::sort(t.excluded_deps.begin(), t.excluded_deps.end(),
                  [](const ExcludedTask& a, const ExcludedTask& b) { return a.id < b.id; });
    }
}

// --exclude-task-dependencies: only the requested tasks, their edges renumbered to what is kept.
std::vector<Task> keep_requested(std::vector<Task> tasks)
{
    std::vector<std::size_t> remap(tasks.size(), SIZE_MAX);
    std::vector<Task> kept;
    for (std::size_t i = 0; i < tasks.size(); ++i)
        if (tasks[i].requested) {
            remap[i] = kept.size();
            kept.push_back(std::move(tasks[i]));
        }
    for (auto& t : kept) {
        for (auto* list : {&t.deps, &t.continuous_deps}) {
            std::vector<std::size_t> out;
            for (std::size_t d : *list)
                if (remap[d] != SIZE_MAX)
                    out.push_back(remap[d]);
            *list = std::move(out);
        }
    }
    return kept;
}

}  // namespace

Result<TaskGraph> TaskGraph::build(const ProjectGraph& graph, const TaskRequest& given)
{
    const Workspace& ws = graph.workspace();
    TaskRequest request = given;
    std::vector<std::string> notes;
    if (!request.task.empty())
        QK_TRY_STATUS(detail::read_task_address(request, ws, notes));
    if (request.targets.empty())
        return error("no target to run: name one or more with -t (for example -t build,test)");
    Builder b(graph);
    b.configuration = request.configuration;

    std::set<std::size_t> explicit_projects;
    QK_TRY(selected, detail::select_projects(ws, request, explicit_projects));
    QK_TRY_STATUS(detail::exclude_projects(ws, request, *selected, explicit_projects));
    QK_TRY_STATUS(add_requested_tasks(b, request, *selected, explicit_projects));
    QK_TRY_STATUS(add_dependencies(b));
    std::vector<Task> tasks = std::move(b.tasks);
    if (request.exclude_task_dependencies) {
        remember_excluded_deps(tasks);
        tasks = keep_requested(std::move(tasks));
    }

    QK_TRY(ordered, detail::order_tasks(std::move(tasks)));
    TaskGraph g;
    g.tasks_ = std::move(*ordered);
    for (std::size_t i = 0; i < g.tasks_.size(); ++i) {
        for (std::size_t d : g.tasks_[i].deps)
            g.tasks_[d].dependents.push_back(i);
        g.by_id_.emplace(g.tasks_[i].id, i);
    }
    g.notes_ = std::move(notes);
    return g;
}

const Task* TaskGraph::find(std::string_view id) const
{
    auto i = index(id);
    return i ? &tasks_[*i] : nullptr;
}

std::optional<std::size_t> TaskGraph::index(std::string_view id) const
{
    auto it = by_id_.find(id);
    if (it == by_id_.end())
        return std::nullopt;
    return it->second;
}

std::vector<std::size_t> TaskGraph::roots() const
{
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < tasks_.size(); ++i)
        if (tasks_[i].deps.empty())
            out.push_back(i);
    return out;
}

std::vector<std::size_t> TaskGraph::transitive_deps(std::size_t i) const
{
    std::vector<char> seen(tasks_.size(), 0);
    std::vector<std::size_t> stack(tasks_[i].deps.begin(), tasks_[i].deps.end());
    while (!stack.empty()) {
        std::size_t d = stack.back();
        stack.pop_back();
        if (seen[d])
            continue;
        seen[d] = 1;
        stack.insert(stack.end(), tasks_[d].deps.begin(), tasks_[d].deps.end());
    }
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k < tasks_.size(); ++k)
        if (seen[k])
            out.push_back(k);
    return out;
}

}  // namespace qk::workspace
