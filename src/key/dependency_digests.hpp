// What a `^` input holds in every project a project depends on, directly or not, as one digest composed
// from each dependency's own, as a Merkle tree is: each project's part is digested once per run, each
// strongly connected component of the project graph (a cycle, or one project) once per input, so a key's
// work follows its project's direct dependencies, not the size of their transitive closure.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "qk/key/hash.hpp"
#include "qk/util/result.hpp"
#include "qk/workspace/project_graph.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::key {

class DependencyDigests {
public:
    // Digests one project's part of an input (its groups' files, JSON selections, variables, commands).
    using PartFn = std::function<Result<Hash128>(std::size_t project, const std::string& input)>;

    DependencyDigests(const workspace::ProjectGraph& graph, PartFn part);

    // The digest of what `input` holds in every project `project` depends on, directly or not (itself
    // left out, as Nx leaves it out). An Error from a part names it. Thread-safe.
    Result<Hash128> of(std::size_t project, const std::string& input);

private:
    struct Input {
        std::vector<std::optional<Hash128>> parts;      // by project
        std::vector<std::optional<Hash128>> reach;      // by component: its members and all below
    };
    void condense();  // Tarjan, without recursion: a chain of 5,000 projects must not exhaust the stack
    Result<Hash128> part(Input& in, std::size_t project, const std::string& input);
    Result<Hash128> reach(Input& in, std::uint32_t component, const std::string& input);
    static void fold_sorted(Hasher& h, std::vector<Hash128>& digests);
    Status fold_members(Hasher& h, Input& in, std::uint32_t component, const std::size_t* skip,
                        const std::string& input);

    const workspace::ProjectGraph& graph_;
    PartFn part_fn_;
    std::mutex mutex_;
    bool condensed_ = false;
    std::vector<std::uint32_t> component_;                // by project
    std::vector<std::vector<std::size_t>> members_;       // by component, sorted
    std::vector<std::vector<std::uint32_t>> successors_;  // by component, sorted, unique
    std::map<std::string, Input, std::less<>> inputs_;
};

}  // namespace qk::key
