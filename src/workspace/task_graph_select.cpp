// task_graph_select (task_graph_select.hpp): what a request selects, moved out of task_graph.cpp as is.
#include "task_graph_select.hpp"

#include <fmt/format.h>

#include "qk/workspace/task_address.hpp"
#include "workspace_match.hpp"

namespace qk::workspace::detail {

Status read_task_address(TaskRequest& request, const Workspace& ws, std::vector<std::string>& notes)
{
    QK_TRY(address, parse_task_address(request.task, ws, ""));
    request.single_task = true;
    request.projects = {address->project};
    request.targets = {address->target};
    if (!address->configuration.empty()) {
        if (!request.configuration.empty() && request.configuration != address->configuration)
            return error(fmt::format("\"{}\" names configuration \"{}\", and -c names \"{}\": give one", request.task,
                                     address->configuration, request.configuration));
        request.configuration = address->configuration;
    }
    if (!address->ambiguity.empty())
        notes.push_back(address->ambiguity);
    return {};
}

Result<std::vector<std::size_t>> select_projects(const Workspace& ws, const TaskRequest& request,
                                                 std::set<std::size_t>& explicit_projects)
{
    std::vector<std::size_t> selected;
    if (request.single_task) {
        // `qk run P:T` names its project exactly: no patterns, no word matches.
        if (request.projects.size() != 1 || request.targets.size() != 1)
            return error("qk run names one task, as project:target");
        QK_TRY(t, ws.target(request.projects[0], request.targets[0]));
        selected.push_back(*ws.project_index(request.projects[0]));
        return selected;
    }
    if (request.projects.empty()) {
        for (std::size_t i = 0; i < ws.projects().size(); ++i)
            selected.push_back(i);
        return selected;
    }
    for (const auto& pattern : request.projects) {
        if (pattern.empty() || pattern[0] == '!')
            continue;
        if (auto i = ws.project_index(pattern)) {
            explicit_projects.insert(*i);
            continue;
        }
        std::vector<std::string> one{pattern};
        QK_TRY(hit, ws.match_projects(one));
        if (hit->empty()) {
            if (!is_glob_pattern(pattern) && pattern.find(':') == std::string::npos)
                return ws.project(pattern).error();
            return error(fmt::format("no project matches \"{}\"", pattern));
        }
    }
    QK_TRY(matched, ws.match_projects(request.projects));
    return std::move(*matched);
}

Status exclude_projects(const Workspace& ws, const TaskRequest& request, std::vector<std::size_t>& selected,
                        std::set<std::size_t>& explicit_projects)
{
    if (request.exclude.empty())
        return {};
    QK_TRY(excluded, ws.match_projects(request.exclude));
    std::set<std::size_t> out(excluded->begin(), excluded->end());
    bool any = !selected.empty();
    std::erase_if(selected, [&](std::size_t p) { return out.contains(p); });
    if (any && selected.empty())
        return error(fmt::format("--exclude {} leaves no project to run: it matches every project selected",
                                 fmt::join(request.exclude, ", ")));
    for (std::size_t p : out)
        explicit_projects.erase(p);
    return {};
}

}  // namespace qk::workspace::detail
