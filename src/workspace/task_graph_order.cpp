// The cycle check and topological order of a task graph (see task_graph_order.hpp).
#include "task_graph_order.hpp"

#include <algorithm>
#include <functional>
#include <queue>

#include <fmt/format.h>

namespace qk::workspace::detail {

namespace {

// The first cycle through deps, as "a:build -> b:build -> a:build"; "" when there is none.
std::string find_cycle(const std::vector<Task>& tasks)
{
    enum : char { white, grey, black };
    std::vector<char> color(tasks.size(), white);
    std::vector<std::size_t> stack;
    std::string cycle;
    std::function<bool(std::size_t)> visit = [&](std::size_t i) {
        color[i] = grey;
        stack.push_back(i);
        for (std::size_t d : tasks[i].deps) {
            if (color[d] == grey) {
                auto from = std::find(stack.begin(), stack.end(), d);
                for (auto it = from; it != stack.end(); ++it)
                    cycle += tasks[*it].id + " -> ";
                cycle += tasks[d].id;
                return true;
            }
            if (color[d] == white && visit(d))
                return true;
        }
        stack.pop_back();
        color[i] = black;
        return false;
    };
    for (std::size_t i = 0; i < tasks.size(); ++i)
        if (color[i] == white && visit(i))
            return cycle;
    return {};
}

}  // namespace

Result<std::vector<Task>> order_tasks(std::vector<Task> tasks)
{
    if (std::string cycle = find_cycle(tasks); !cycle.empty())
        return error(fmt::format("dependsOn forms a cycle: {}; remove one of these dependencies", cycle));

    // Kahn's algorithm, the ready task found first going first.
    std::vector<std::size_t> indegree(tasks.size(), 0);
    std::vector<std::vector<std::size_t>> dependents(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        indegree[i] = tasks[i].deps.size();
        for (std::size_t d : tasks[i].deps)
            dependents[d].push_back(i);
    }
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < tasks.size(); ++i)
        if (indegree[i] == 0)
            ready.push(i);
    std::vector<std::size_t> order, position(tasks.size());
    while (!ready.empty()) {
        std::size_t i = ready.top();
        ready.pop();
        position[i] = order.size();
        order.push_back(i);
        for (std::size_t d : dependents[i])
            if (--indegree[d] == 0)
                ready.push(d);
    }
    std::vector<Task> out;
    out.reserve(tasks.size());
    for (std::size_t i : order) {
        Task t = std::move(tasks[i]);
        for (auto* list : {&t.deps, &t.continuous_deps}) {
            for (auto& d : *list)
                d = position[d];
            std::sort(list->begin(), list->end());
        }
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace qk::workspace::detail
