// What a task request selects before any task is made: `qk run`'s address read against the workspace,
// the projects the request names or matches, less those --exclude matches. TaskGraph::build's first steps.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/task_graph.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::workspace::detail {

// `qk run P:T[:C]`: the task address read against the workspace (a target's name may hold colons) into
// the request's project, target and configuration; an ambiguity it resolved is a note for the run.
Status read_task_address(TaskRequest& request, const Workspace& ws, std::vector<std::string>& notes);

// The projects the request selects, and among them those it names exactly (`explicit_projects`: one of
// them lacking every requested target is an error, where a pattern's match may lack them).
Result<std::vector<std::size_t>> select_projects(const Workspace& ws, const TaskRequest& request,
                                                 std::set<std::size_t>& explicit_projects);

// Nx's run-many: the selected projects less those --exclude matches (names, globs, tag:, root globs).
Status exclude_projects(const Workspace& ws, const TaskRequest& request, std::vector<std::size_t>& selected,
                        std::set<std::size_t>& explicit_projects);

}  // namespace qk::workspace::detail
