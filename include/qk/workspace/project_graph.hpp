// The project graph: which workspace project depends on which, from package.json dependencies on
// workspace packages (workspace: protocol or any version, link:/file: to a project's directory) and
// implicitDependencies ("!x" removes an edge). External npm packages are the lockfile's business.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::workspace {

struct ProjectEdge {
    enum class Kind : std::uint8_t {
        package_json,  // a dependency in package.json (dependencies, dev-, optional-, peerDependencies)
        implicit,      // implicitDependencies
    };
    std::size_t target = 0;  // index into Workspace::projects()
    Kind kind = Kind::package_json;
    std::string via;  // package_json: "dependencies.b" (the field and the name written); implicit: the pattern
};

class ProjectGraph {
public:
    // Builds the graph of `ws`, which must outlive it and stay where it is (the graph points at it).
    // Errors: an implicitDependencies pattern that matches no project.
    static Result<ProjectGraph> build(const Workspace& ws);

    const Workspace& workspace() const { return *ws_; }
    std::size_t size() const { return out_.size(); }

    // Direct dependencies of project `i` (indices into Workspace::projects()), sorted by index, one edge
    // per dependency (the first reason found).
    const std::vector<ProjectEdge>& edges(std::size_t i) const { return out_[i]; }
    std::vector<std::size_t> dependencies(std::size_t i) const;
    // Projects that depend on `i` directly, sorted.
    const std::vector<std::size_t>& dependents(std::size_t i) const { return in_[i]; }
    // Every project `i` depends on, directly or not, without `i` itself; sorted. Cycles are fine here.
    std::vector<std::size_t> transitive_dependencies(std::size_t i) const;

private:
    const Workspace* ws_ = nullptr;
    std::vector<std::vector<ProjectEdge>> out_;
    std::vector<std::vector<std::size_t>> in_;
};

}  // namespace qk::workspace
