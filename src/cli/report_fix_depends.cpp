// qk report fix (report_fix_depends.hpp): a target's outputs resolved as a run resolves them, matched with
// the workspace's own globs.
#include "report_fix_depends.hpp"

#include "qk/key/outputs.hpp"
#include "qk/util/path_within.hpp"
#include "qk/workspace/glob.hpp"
#include "qk/workspace/json_edit.hpp"

namespace qk::cli {

std::string Producer::depends_on_json() const
{
    return "{\"projects\": [" + workspace::json_string(project->name) +
           "], \"target\": " + workspace::json_string(target->name) + "}";
}

std::optional<std::string> value_path(std::string_view value, const workspace::Project& project)
{
    std::string path;
    if (value.starts_with("{projectRoot}/")) {
        value.remove_prefix(std::string_view("{projectRoot}/").size());
        path = project.root == "." ? std::string(value) : project.root + "/" + std::string(value);
    } else if (value.starts_with("{workspaceRoot}/")) {
        path = value.substr(std::string_view("{workspaceRoot}/").size());
    } else {
        return std::nullopt;
    }
    auto glob = workspace::Glob::compile(path);
    if (!is_plain_relative(path) || !glob || !glob->is_literal())
        return std::nullopt;
    return path;
}

Producers::Producers(const workspace::Workspace& ws)
{
    for (const workspace::Project& p : ws.projects())
        for (const workspace::Target& t : p.targets) {
            auto resolved = key::resolve_outputs(p, t);
            if (!resolved || resolved->paths.empty())
                continue;  // an empty group would match every path
            auto set = workspace::GlobSet::compile_fileset(resolved->paths);
            if (set && !set->literal_prefix().empty())
                outputs_.push_back({Producer{&p, &t}, std::move(*set)});
        }
}

std::optional<Producer> Producers::of(std::string_view path, const workspace::Target& reader) const
{
    for (const auto& [producer, set] : outputs_)
        if (producer.target != &reader && set.matches(path))
            return producer;
    return std::nullopt;
}

bool depends_on(const workspace::Project& project, const workspace::Target& target, const Producer& producer)
{
    using Scope = workspace::DependsOn::Scope;
    for (const workspace::DependsOn& d : target.depends_on) {
        if (d.target != producer.target->name)
            continue;
        if (d.scope == Scope::self && &project == producer.project)
            return true;
        if (d.scope == Scope::projects)
            for (const std::string& name : d.projects)
                if (name == producer.project->name)
                    return true;
    }
    return false;
}

}  // namespace qk::cli
