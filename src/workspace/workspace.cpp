// Workspace: finding the root, loading the configuration (the steps live in config_*.cpp), lookups.
#include "qk/workspace/workspace.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "config/config_loader.hpp"
#include "qk/util/edit_distance.hpp"
#include "qk/util/path_within.hpp"

namespace qk::workspace {

namespace fs = std::filesystem;

namespace {

std::string list_names(std::vector<std::string> names, std::size_t limit = 20)
{
    std::sort(names.begin(), names.end());
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < limit; ++i)
        out += (i ? ", " : "") + names[i];
    if (names.size() > limit)
        out += fmt::format(" and {} more", names.size() - limit);
    return out.empty() ? "none" : out;
}

}  // namespace

Result<fs::path> Workspace::find_root(const fs::path& start)
{
    std::error_code ec;
    fs::path dir = fs::absolute(start, ec);
    if (ec)
        return sys_error(fmt::format("{}: cannot resolve the directory", start.string()), ec.value());
    dir = dir.lexically_normal();
    if (dir.has_filename() == false && dir != dir.root_path())
        dir = dir.parent_path();
    for (fs::path d = dir;; d = d.parent_path()) {
        if (fs::is_regular_file(d / "nx.json", ec) || fs::is_regular_file(d / "pnpm-workspace.yaml", ec))
            return d;
        if (d == d.root_path() || d.parent_path() == d)
            break;
    }
    return error(fmt::format("no workspace found: neither nx.json nor pnpm-workspace.yaml is in {} or any directory "
                             "above it; run qk inside a workspace",
                             dir.string()));
}

Result<Workspace> Workspace::load(const fs::path& root, const std::vector<std::string>* listed)
{
    return WorkspaceLoader::load(root, listed);
}

Result<Workspace> Workspace::discover(const fs::path& start)
{
    QK_TRY(root, find_root(start));
    return load(*root);
}

Result<Workspace> WorkspaceLoader::load(const fs::path& root_in, const std::vector<std::string>* listed)
{
    Workspace ws;
    std::error_code ec;
    ws.root_ = fs::absolute(root_in, ec).lexically_normal();
    if (!ws.root_.has_filename() && ws.root_ != ws.root_.root_path())
        ws.root_ = ws.root_.parent_path();

    QK_TRY(nx, detail::read_nx_config(ws.root_, ws.files_));
    ws.nx_ = std::move(*nx);

    bool found = false;
    QK_TRY(root_pkg, detail::read_optional_json(ws.root_, "package.json", &found));
    if (found) {
        ws.files_.root_package_json = "package.json";
        if (!root_pkg->is_object())
            return error(fmt::format("package.json:{}:{}: the file's top level must be an object, found {}",
                                     root_pkg->line(), root_pkg->column(), root_pkg->describe()));
    }
    QK_TRY(discovery, detail::discover_projects(ws.root_, found ? *root_pkg : Json::object(), ws.files_, listed));
    ws.package_globs_ = std::move(discovery->package_globs);

    std::vector<detail::RawProject> raws;
    std::set<std::string, std::less<>> names;
    std::map<std::string, std::string> root_of_name;
    for (const auto& project_root : discovery->project_roots) {
        QK_TRY(raw, detail::read_project(ws.root_, project_root));
        Project p;
        p.name = detail::project_name(*raw, ws.root_);
        auto [it, inserted] = root_of_name.emplace(p.name, project_root);
        if (!inserted)
            return error(fmt::format("two projects are named \"{}\": {} and {}; give one of them another \"name\" "
                                     "(in its project.json or package.json)",
                                     p.name, it->second, project_root));
        names.insert(p.name);
        p.root = project_root;
        ws.projects_.push_back(std::move(p));
        raws.push_back(std::move(*raw));
    }

    for (std::size_t i = 0; i < ws.projects_.size(); ++i) {
        Project& p = ws.projects_[i];
        const detail::RawProject& raw = raws[i];
        p.package_json = raw.package_json;
        p.project_json = raw.project_json;
        p.project_local_json = raw.project_local_json;
        p.package_manifest = raw.manifest;
        if (const Json* n = raw.manifest.find("name"); n && n->is_string())
            p.package_name = n->as_string();
        if (const Json* v = raw.manifest.find("version"); v && v->is_string())
            p.package_version = v->as_string();
        if (const Json* tags = raw.merged.find("tags"))
            for (const auto& t : tags->as_array())
                p.tags.push_back(t.as_string());
        if (const Json* deps = raw.merged.find("implicitDependencies"))
            for (const auto& d : deps->as_array())
                p.implicit_dependencies.push_back(d.as_string());
        const Json* named = raw.merged.find("namedInputs");
        p.named_inputs = named ? *named : Json::object();
        QK_TRY_STATUS(detail::resolve_targets(p, raw, ws.nx_, names));
        p.raw_without_targets = raw.merged;
        p.raw_without_targets.set("name", Json::string(p.name));
        p.raw_without_targets.set("targets", Json::object());  // keeps its place among the keys
    }
    std::sort(ws.projects_.begin(), ws.projects_.end(),
              [](const Project& a, const Project& b) { return a.name < b.name; });
    for (std::size_t i = 0; i < ws.projects_.size(); ++i)
        ws.by_root_.emplace(ws.projects_[i].root == "." ? std::string() : ws.projects_[i].root, i);
    return ws;
}

std::optional<std::size_t> Workspace::project_at(std::string_view root) const
{
    if (auto it = by_root_.find(root == "." ? std::string_view() : root); it != by_root_.end())
        return it->second;
    return std::nullopt;
}

Json Project::raw() const
{
    Json out = raw_without_targets;
    Json all = Json::object();
    for (const auto& t : targets)
        all.set(t.name, t.raw);
    out.set("targets", std::move(all));
    return out;
}

std::string Target::configured_in() const
{
    std::string files;
    for (const std::string& f : defined_in)
        files += (files.empty() ? "" : ", ") + f;
    if (!target_default_key.empty())
        files += (files.empty() ? "" : ", or ") + fmt::format("nx.json's targetDefaults \"{}\"", target_default_key);
    return files;
}

const Target* Project::find_target(std::string_view name) const
{
    auto it = std::lower_bound(targets.begin(), targets.end(), name,
                               [](const Target& t, std::string_view n) { return t.name < n; });
    return it != targets.end() && it->name == name ? &*it : nullptr;
}

std::optional<std::size_t> Workspace::project_index(std::string_view name) const
{
    auto it = std::lower_bound(projects_.begin(), projects_.end(), name,
                               [](const Project& p, std::string_view n) { return p.name < n; });
    if (it != projects_.end() && it->name == name)
        return static_cast<std::size_t>(it - projects_.begin());
    return std::nullopt;
}

const Project* Workspace::find_project(std::string_view name) const
{
    auto i = project_index(name);
    return i ? &projects_[*i] : nullptr;
}

const Project* Workspace::project_owning(std::string_view path) const
{
    const Project* best = nullptr;
    for (const auto& p : projects_) {
        bool inside = p.root == "." || is_within(path, p.root);
        if (inside && (!best || best->root == "." || (p.root != "." && p.root.size() > best->root.size())))
            best = &p;
    }
    return best;
}

Result<const Project*> Workspace::project(std::string_view name) const
{
    if (const Project* p = find_project(name))
        return p;
    std::vector<std::string> all;
    for (const auto& p : projects_)
        all.push_back(p.name);
    return error(fmt::format("unknown project \"{}\"{}; the workspace's projects are: {}", name,
                             did_you_mean(name, all), list_names(all)));
}

Result<const Target*> Workspace::target(std::string_view project_name, std::string_view target_name) const
{
    QK_TRY(p, project(project_name));
    if (const Target* t = (*p)->find_target(target_name))
        return t;
    std::vector<std::string> all;
    for (const auto& t : (*p)->targets)
        all.push_back(t.name);
    return error(fmt::format("project \"{}\" has no target \"{}\"{}; its targets are: {}", project_name, target_name,
                             did_you_mean(target_name, all), list_names(all)));
}

Json Workspace::named_inputs_for(const Project& project) const
{
    Json out = Json::object();
    Json def = Json::array();
    def.as_array().push_back(Json::string("{projectRoot}/**/*"));
    out.set("default", std::move(def));
    for (const auto& [k, v] : nx_.named_inputs.as_object())
        out.set(k, v);
    for (const auto& [k, v] : project.named_inputs.as_object())
        out.set(k, v);
    return out;
}

}  // namespace qk::workspace
