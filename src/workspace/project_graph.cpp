// The project graph. Edges, as Nx makes them without source analysis:
// - package.json: dependencies, devDependencies, optionalDependencies and peerDependencies naming a
//   workspace package (nx/src/plugins/js/project-graph/build-dependencies/explicit-package-json-
//   dependencies.ts), whatever the version: "workspace:*", "^1.0.0", or an alias "workspace:<name>@..."
//   (pnpm's), and a "link:"/"file:" path to a project's directory;
// - implicitDependencies: Nx's normalizeImplicitDependencies: positive patterns (findMatchingProjects,
//   with the negatives applied) add edges; each "!x" removes the edge to x whatever made it
//   (implicit-project-dependencies.ts).
#include "qk/workspace/project_graph.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace qk::workspace {

namespace fs = std::filesystem;

namespace {

// The project whose root is `relative` (a path from `from`'s root), if any.
std::optional<std::size_t> project_at(const Workspace& ws, const Project& from, const std::string& relative)
{
    std::string dir = (fs::path(from.root) / relative).lexically_normal().generic_string();
    while (dir.size() > 1 && dir.back() == '/')
        dir.pop_back();
    bool root = dir.empty() || dir == "." || dir == "./";
    return ws.project_at(root ? std::string_view() : std::string_view(dir));
}

// The workspace package a dependency entry points at, if any.
std::optional<std::size_t> resolve_dependency(const Workspace& ws, const Project& from, const std::string& name,
                                              const std::string& spec,
                                              const std::map<std::string, std::size_t, std::less<>>& by_package)
{
    std::string target_name = name;
    if (spec.rfind("workspace:", 0) == 0) {
        // pnpm's forms: workspace:*, workspace:^1.0.0, workspace:<name>@<range> (an alias), and
        // workspace:../dir (a path).
        std::string rest = spec.substr(10);
        if (rest.rfind("./", 0) == 0 || rest.rfind("../", 0) == 0)
            return project_at(ws, from, rest);
        auto at = rest.find('@', 1);
        if (at != std::string::npos)
            target_name = rest.substr(0, at);
    } else if (spec.rfind("link:", 0) == 0 || spec.rfind("file:", 0) == 0) {
        return project_at(ws, from, spec.substr(5));
    } else if (spec.rfind("npm:", 0) == 0) {
        return std::nullopt;  // an alias of a registry package
    }
    if (auto it = by_package.find(target_name); it != by_package.end())
        return it->second;
    return std::nullopt;
}

}  // namespace

Result<ProjectGraph> ProjectGraph::build(const Workspace& ws)
{
    ProjectGraph g;
    g.ws_ = &ws;
    const auto& projects = ws.projects();
    g.out_.resize(projects.size());
    g.in_.resize(projects.size());

    std::map<std::string, std::size_t, std::less<>> by_package;
    for (std::size_t i = 0; i < projects.size(); ++i)
        if (!projects[i].package_name.empty())
            by_package.emplace(projects[i].package_name, i);

    std::vector<std::map<std::size_t, ProjectEdge>> edges(projects.size());
    for (std::size_t i = 0; i < projects.size(); ++i) {
        const Project& p = projects[i];
        for (const char* field : {"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"}) {
            const Json* deps = p.package_manifest.find(field);
            if (!deps || !deps->is_object())
                continue;
            for (const auto& [name, spec] : deps->as_object()) {
                auto target = resolve_dependency(ws, p, name, spec.is_string() ? spec.as_string() : std::string(),
                                                 by_package);
                if (!target || *target == i)
                    continue;
                edges[i].emplace(*target, ProjectEdge{*target, ProjectEdge::Kind::package_json,
                                                      fmt::format("{}.{}", field, name)});
            }
        }
        if (p.implicit_dependencies.empty())
            continue;
        std::vector<std::string> positives, negatives;
        for (const auto& d : p.implicit_dependencies)
            (d.rfind('!', 0) == 0 ? negatives : positives).push_back(d);
        if (!positives.empty()) {
            for (const auto& pattern : positives) {
                std::vector<std::string> one{pattern};
                QK_TRY(hit, ws.match_projects(one));
                if (hit->empty())
                    return error(fmt::format("project \"{}\": implicitDependencies names \"{}\", which matches no "
                                             "project; fix the name or remove it",
                                             p.name, pattern));
            }
            std::vector<std::string> all = positives;
            all.insert(all.end(), negatives.begin(), negatives.end());
            QK_TRY(matched, ws.match_projects(all));
            for (std::size_t target : *matched) {
                if (target == i)
                    continue;
                edges[i].try_emplace(target, ProjectEdge{target, ProjectEdge::Kind::implicit, "implicitDependencies"});
            }
        }
        if (!negatives.empty()) {
            std::vector<std::string> stripped;
            for (const auto& n : negatives)
                stripped.push_back(n.substr(1));
            QK_TRY(removed, ws.match_projects(stripped));
            for (std::size_t target : *removed)
                edges[i].erase(target);
        }
    }
    for (std::size_t i = 0; i < projects.size(); ++i) {
        for (auto& [target, edge] : edges[i]) {
            g.out_[i].push_back(edge);
            g.in_[target].push_back(i);
        }
    }
    for (auto& v : g.in_)
        std::sort(v.begin(), v.end());
    return g;
}

std::vector<std::size_t> ProjectGraph::dependencies(std::size_t i) const
{
    std::vector<std::size_t> out;
    for (const auto& e : out_[i])
        out.push_back(e.target);
    return out;
}

std::vector<std::size_t> ProjectGraph::transitive_dependencies(std::size_t i) const
{
    std::vector<char> seen(out_.size(), 0);
    std::vector<std::size_t> stack{i};
    seen[i] = 1;
    std::vector<std::size_t> out;
    while (!stack.empty()) {
        std::size_t cur = stack.back();
        stack.pop_back();
        for (const auto& e : out_[cur]) {
            if (seen[e.target])
                continue;
            seen[e.target] = 1;
            out.push_back(e.target);
            stack.push_back(e.target);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace qk::workspace
