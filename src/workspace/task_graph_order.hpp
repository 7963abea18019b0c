// Ordering a task graph: the cycle check and the topological order TaskGraph::build ends with.
#pragma once

#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/task_graph.hpp"

namespace qk::workspace::detail {

// `tasks` (deps and continuous_deps as indices into it) in an order that puts every task after its
// deps, ties broken by their order in `tasks`, indices renumbered; or, when the deps form a cycle,
// the error naming the first one found: "dependsOn forms a cycle: a:build -> b:build -> a:build; ...".
// Continuous deps are not awaited, so they neither order tasks nor make cycles.
Result<std::vector<Task>> order_tasks(std::vector<Task> tasks);

}  // namespace qk::workspace::detail
