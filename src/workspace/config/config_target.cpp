// A project's targets resolved into the model, as Nx's normalizeTargets does (nx/src/project-graph/
// utils/project-configuration/target-normalization.ts): the `command` shorthand, tokens in options,
// then the one targetDefaults entry that applies (readTargetDefaultsForTarget: the executor's key, else
// the target's name, else the longest glob key matching the name), filled in when compatible; a target
// with neither executor nor command becomes nx:noop when it has dependsOn and is dropped otherwise.
#include <algorithm>

#include <fmt/format.h>

#include "config_loader.hpp"
#include "config_merge.hpp"
#include "config_validate.hpp"
#include "workspace_match.hpp"

namespace qk::workspace::detail {
namespace {

std::string string_or(const Json& obj, std::string_view key, const std::string& fallback = {})
{
    const Json* v = obj.find(key);
    return v && v->is_string() ? v->as_string() : fallback;
}

// The targetDefaults key for a target, "" when none applies.
std::string target_default_key(const Json& defaults, const std::string& name, const std::string& executor)
{
    if (!executor.empty() && defaults.find(executor))
        return executor;
    if (defaults.find(name))
        return name;
    std::string best;
    for (const auto& [key, value] : defaults.as_object())
        if (is_glob_pattern(key) && key.size() > best.size() && glob_matches(key, name))
            best = key;
    return best;
}

Result<Json> resolve_target_tokens(Json t, const Project& p, std::string_view where)
{
    if (const Json* opts = t.find("options")) {
        QK_TRY(r, resolve_tokens_in_options(*opts, p.root, p.name, fmt::format("{}.options", where)));
        t.set("options", std::move(*r));
    }
    if (const Json* cfgs = t.find("configurations")) {
        QK_TRY(r, resolve_tokens_in_options(*cfgs, p.root, p.name, fmt::format("{}.configurations", where)));
        t.set("configurations", std::move(*r));
    }
    return t;
}

// Nx's readProjectAndTargetFromTargetString: "proj:target" names another project only when `proj` is one.
DependsOn depends_on_from_string(const Json& entry, const std::set<std::string, std::less<>>& names)
{
    DependsOn d;
    d.raw = entry;
    const std::string& s = entry.as_string();
    if (!s.empty() && s[0] == '^') {
        d.scope = DependsOn::Scope::dependencies;
        d.target = s.substr(1);
        return d;
    }
    auto colon = s.find(':');
    if (colon != std::string::npos && names.count(s.substr(0, colon))) {
        d.scope = DependsOn::Scope::projects;
        d.projects = {s.substr(0, colon)};
        d.target = s.substr(colon + 1);
        return d;
    }
    d.target = s;
    return d;
}

DependsOn depends_on_from_object(const Json& entry)
{
    DependsOn d;
    d.raw = entry;
    d.target = entry.find("target")->as_string();
    bool dependencies = false;
    if (const Json* dep = entry.find("dependencies"))
        dependencies = dep->as_bool();
    if (const Json* projects = entry.find("projects")) {
        if (projects->is_string()) {
            const std::string& p = projects->as_string();
            if (p == "self" || p == "{self}")
                ;  // this project (legacy string form)
            else if (p == "dependencies" || p == "{dependencies}")
                dependencies = true;
            else
                d.projects = {p};
        } else {
            for (const auto& p : projects->as_array())
                d.projects.push_back(p.as_string());
        }
    }
    if (!d.projects.empty())
        d.scope = DependsOn::Scope::projects;
    else if (dependencies)
        d.scope = DependsOn::Scope::dependencies;
    d.params = string_or(entry, "params", "ignore");
    d.options = string_or(entry, "options", "ignore");
    if (const Json* in = entry.find("inputs"))
        d.inputs = in->as_bool();
    return d;
}

std::vector<std::string> strings_of(const Json* arr)
{
    std::vector<std::string> out;
    if (arr && arr->is_array())
        for (const auto& s : arr->as_array())
            out.push_back(s.as_string());
    return out;
}

Target make_target(const std::string& name, const Json& t, const NxConfig& nx,
                   const std::set<std::string, std::less<>>& names)
{
    Target target;
    target.name = name;
    target.raw = t;
    target.executor = string_or(t, "executor");
    const Json* opts = t.find("options");
    target.options = opts ? *opts : Json::object();
    const Json* cfgs = t.find("configurations");
    target.configurations = cfgs ? *cfgs : Json::object();
    target.default_configuration = string_or(t, "defaultConfiguration");
    if (const Json* deps = t.find("dependsOn"))
        for (const auto& entry : deps->as_array())
            target.depends_on.push_back(entry.is_string() ? depends_on_from_string(entry, names)
                                                          : depends_on_from_object(entry));
    if (const Json* in = t.find("inputs"))
        target.inputs = *in;
    if (const Json* out = t.find("outputs"))
        target.outputs = *out;
    if (const Json* cache = t.find("cache"))
        target.cache = cache->as_bool();
    else
        target.cache = std::find(nx.cacheable_operations.begin(), nx.cacheable_operations.end(), name) !=
                       nx.cacheable_operations.end();
    if (const Json* c = t.find("continuous"))
        target.continuous = c->as_bool();
    if (const Json* p = t.find("parallelism"))
        target.parallelism = p->as_bool();
    const Json* sb = t.find("qk:sandbox");
    if (sb) {
        if (sb->is_bool())
            target.sandbox.enabled = sb->as_bool();
        else
            target.sandbox.scratch = strings_of(sb->find("scratch"));
    }
    const Json* network = sb && sb->is_object() ? sb->find("network") : nullptr;
    target.sandbox.network = network ? read_network(network, "target") : nx.network;
    if (const Json* uc = t.find("qk:ultracache")) {
        target.has_ultracache = true;
        target.ultracache_ignore_reads = strings_of(uc->find("ignoreReads"));
    }
    target.warm = strings_of(t.find("qk:warm"));
    return target;
}

}  // namespace

Status resolve_targets(Project& project, const RawProject& raw, const NxConfig& nx,
                       const std::set<std::string, std::less<>>& project_names)
{
    const Json* targets = raw.merged.find("targets");
    if (!targets)
        return {};
    for (const auto& [name, definition] : targets->as_object()) {
        std::string where = fmt::format("project \"{}\" ({}), target \"{}\"", project.name, project.root, name);
        QK_TRY(t, resolve_command_sugar(definition, where));
        QK_TRY(resolved, resolve_target_tokens(std::move(*t), project, where));
        Json target_json = std::move(*resolved);
        const bool names_inputs = target_json.find("inputs") != nullptr;
        const bool names_outputs = target_json.find("outputs") != nullptr;

        std::string key = target_default_key(nx.target_defaults, name, string_or(target_json, "executor"));
        if (!key.empty()) {
            std::string td_where = fmt::format("nx.json: targetDefaults.{} (applied to {}:{})", key, project.name, name);
            QK_TRY(td, resolve_command_sugar(*nx.target_defaults.find(key), td_where));
            QK_TRY(td_resolved, resolve_target_tokens(std::move(*td), project, td_where));
            if (is_compatible_target(target_json, *td_resolved))
                target_json = merge_target_default(target_json, *td_resolved);
            else
                key.clear();
        }
        target_json = strip_spreads(target_json);
        if (!target_json.find("executor") && !target_json.find("command")) {
            const Json* deps = target_json.find("dependsOn");
            if (!deps || deps->as_array().empty())
                continue;  // does nothing and depends on nothing: Nx drops it
            target_json.set("executor", Json::string("nx:noop"));
        }
        Target target = make_target(name, target_json, nx, project_names);
        target.target_default_key = key;
        target.names_inputs = names_inputs;
        target.names_outputs = names_outputs;
        if (auto it = raw.target_files.find(name); it != raw.target_files.end())
            target.defined_in = it->second;
        target.run = make_run_spec(target, project);
        project.targets.push_back(std::move(target));
    }
    std::sort(project.targets.begin(), project.targets.end(),
              [](const Target& a, const Target& b) { return a.name < b.name; });
    return {};
}

}  // namespace qk::workspace::detail
