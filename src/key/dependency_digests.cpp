#include "dependency_digests.hpp"

#include <algorithm>
#include <limits>

namespace qk::key {

DependencyDigests::DependencyDigests(const workspace::ProjectGraph& graph, PartFn part)
    : graph_(graph), part_fn_(std::move(part))
{
}

void DependencyDigests::condense()
{
    const std::size_t n = graph_.size();
    constexpr std::uint32_t unseen = std::numeric_limits<std::uint32_t>::max();
    std::vector<std::uint32_t> index(n, unseen), low(n, 0);
    std::vector<bool> on_stack(n, false);
    std::vector<std::size_t> stack;
    component_.assign(n, unseen);
    std::uint32_t next = 0;
    struct Frame {
        std::size_t project, edge;
    };
    for (std::size_t root = 0; root < n; ++root) {
        if (index[root] != unseen)
            continue;
        std::vector<Frame> calls{{root, 0}};
        index[root] = low[root] = next++;
        stack.push_back(root);
        on_stack[root] = true;
        while (!calls.empty()) {
            Frame& f = calls.back();
            const auto& edges = graph_.edges(f.project);
            if (f.edge < edges.size()) {
                std::size_t w = edges[f.edge++].target;
                if (index[w] == unseen) {
                    index[w] = low[w] = next++;
                    stack.push_back(w);
                    on_stack[w] = true;
                    calls.push_back({w, 0});
                } else if (on_stack[w]) {
                    low[f.project] = std::min(low[f.project], index[w]);
                }
                continue;
            }
            std::size_t v = f.project;
            calls.pop_back();
            if (!calls.empty())
                low[calls.back().project] = std::min(low[calls.back().project], low[v]);
            if (low[v] != index[v])
                continue;
            // v roots a component: everything above it on the stack. Components come out after every
            // component they reach, so a successor's number is always smaller.
            auto id = static_cast<std::uint32_t>(members_.size());
            members_.emplace_back();
            for (;;) {
                std::size_t w = stack.back();
                stack.pop_back();
                on_stack[w] = false;
                component_[w] = id;
                members_.back().push_back(w);
                if (w == v)
                    break;
            }
            std::sort(members_.back().begin(), members_.back().end());
        }
    }
    successors_.assign(members_.size(), {});
    for (std::uint32_t c = 0; c < members_.size(); ++c) {
        for (std::size_t m : members_[c])
            for (const workspace::ProjectEdge& e : graph_.edges(m))
                if (component_[e.target] != c)
                    successors_[c].push_back(component_[e.target]);
        std::sort(successors_[c].begin(), successors_[c].end());
        successors_[c].erase(std::unique(successors_[c].begin(), successors_[c].end()), successors_[c].end());
    }
    condensed_ = true;
}

Result<Hash128> DependencyDigests::part(Input& in, std::size_t project, const std::string& input)
{
    if (!in.parts[project]) {
        QK_TRY(h, part_fn_(project, input));
        in.parts[project] = *h;
    }
    return *in.parts[project];
}

// By value, not by component number: numbers follow the graph's traversal, which adding an unrelated
// project changes, and a key must not move for that.
void DependencyDigests::fold_sorted(Hasher& h, std::vector<Hash128>& digests)
{
    std::sort(digests.begin(), digests.end());
    h.field(std::uint64_t{digests.size()});
    for (const Hash128& d : digests)
        h.field(d);
}

// Each member (but `skip`) by name with its part: names, not indices, which move as projects come and go.
Status DependencyDigests::fold_members(Hasher& h, Input& in, std::uint32_t component, const std::size_t* skip,
                                       const std::string& input)
{
    std::vector<std::pair<const std::string*, Hash128>> parts;
    for (std::size_t m : members_[component]) {
        if (skip && m == *skip)
            continue;
        QK_TRY(p, part(in, m, input));
        parts.emplace_back(&graph_.workspace().projects()[m].name, *p);
    }
    std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
    h.field(std::uint64_t{parts.size()});
    for (const auto& [name, digest] : parts)
        h.field(*name).field(digest);
    return {};
}

// A component's members' parts and every component below it, computed bottom-up with an explicit stack.
Result<Hash128> DependencyDigests::reach(Input& in, std::uint32_t component, const std::string& input)
{
    std::vector<std::uint32_t> todo{component};
    while (!todo.empty()) {
        std::uint32_t c = todo.back();
        if (in.reach[c]) {
            todo.pop_back();
            continue;
        }
        bool ready = true;
        for (std::uint32_t s : successors_[c])
            if (!in.reach[s]) {
                todo.push_back(s);
                ready = false;
            }
        if (!ready)
            continue;
        Hasher h;
        h.field("qk reach");
        QK_TRY_STATUS(fold_members(h, in, c, nullptr, input));
        std::vector<Hash128> below;
        for (std::uint32_t s : successors_[c])
            below.push_back(*in.reach[s]);
        fold_sorted(h, below);
        in.reach[c] = h.digest();
        todo.pop_back();
    }
    return *in.reach[component];
}

Result<Hash128> DependencyDigests::of(std::size_t project, const std::string& input)
{
    std::lock_guard lock(mutex_);
    if (!condensed_)
        condense();
    auto it = inputs_.find(input);
    if (it == inputs_.end()) {
        Input fresh;
        fresh.parts.assign(graph_.size(), std::nullopt);
        fresh.reach.assign(members_.size(), std::nullopt);
        it = inputs_.emplace(input, std::move(fresh)).first;
    }
    Input& in = it->second;
    // Its own component's other members (in a cycle it reaches them, but not itself), then all below.
    std::uint32_t c = component_[project];
    Hasher h;
    h.field("qk dependencies").field(input);
    QK_TRY_STATUS(fold_members(h, in, c, &project, input));
    std::vector<Hash128> below;
    for (std::uint32_t s : successors_[c]) {
        QK_TRY(r, reach(in, s, input));
        below.push_back(*r);
    }
    fold_sorted(h, below);
    return h.digest();
}

}  // namespace qk::key
