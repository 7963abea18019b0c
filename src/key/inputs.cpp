// Expanding a task's inputs as Nx's task hasher does (task-hasher.ts splitInputsIntoSelfAndDependencies,
// expandSingleProjectInputs; hash_planner.rs gather_self_inputs / gather_dependency_input):
//  - a string naming a defined named input expands it (the project's definition wins over nx.json's);
//  - "^name" applies the named input, expanded with each dependency's own definitions, to every project
//    the task's project depends on, directly or not; "^{projectRoot}/..." does the same for a fileset;
//  - {input, projects} applies a named input to other projects, not transitively.
// Where Nx warns and drops a pattern that starts with no token, qk refuses it: a key that silently
// holds less than the user wrote is what the sandbox exists to catch.
#include "qk/key/inputs.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "input_tokens.hpp"

namespace qk::key {

using workspace::Json;
using workspace::Project;

namespace {

// Where a fileset lands: a project (or workspace) group, per expansion origin.
struct GroupKey {
    std::optional<std::size_t> project;
    std::size_t owner;  // the project whose inputs these are (for workspace groups)
    std::string origin;
    auto operator<=>(const GroupKey&) const = default;
};

class Expander {
public:
    // `task` names the task in messages ("" for a dependency part, whose messages the task prefixes).
    Expander(const workspace::ProjectGraph& graph, std::size_t project, std::string task, InputCache& cache,
             Expansion expansion = Expansion::full)
        : graph_(graph), ws_(graph.workspace()), self_(project), cache_(cache), task_(std::move(task)),
          expansion_(expansion)
    {
    }

    Status run(const Json& inputs);
    // A dependency part: `input` (a named input, or a fileset) as project self_ holds it.
    Status part(const std::string& input);
    Result<InputPlan> finish();

private:
    const Project& project(std::size_t i) const { return ws_.projects()[i]; }
    Error fail(const std::string& what) const
    {
        return error(task_.empty() ? what : fmt::format("task {}: {}", task_, what));
    }

    Status top_level(const Json& item);
    // Expands named input `name` as project `p` defines it, adding what it holds as `p`'s inputs.
    Status named(std::size_t p, const std::string& name, const std::string& origin, std::vector<std::string>& stack);
    Status definition_item(std::size_t p, const Json& item, const std::string& origin, std::vector<std::string>& stack);
    Status fileset(std::size_t p, const std::string& pattern, const std::string& origin);
    Status object(std::size_t p, const Json& item, const std::string& origin);
    Status dependency(const std::string& input);
    const Json& definitions(std::size_t p);

    const workspace::ProjectGraph& graph_;
    const workspace::Workspace& ws_;
    std::size_t self_;
    InputCache& cache_;
    std::string task_;
    std::map<GroupKey, std::vector<std::string>> groups_;
    std::vector<JsonInput> json_;
    std::set<std::string> env_;
    std::vector<std::string> runtime_;
    std::optional<std::set<std::string>> external_;
    std::vector<DependentOutputsInput> dependent_outputs_;
    std::vector<std::shared_ptr<const FilesetGroup>> dependency_groups_;
    Expansion expansion_;
    std::set<std::string> dependency_inputs_;
};

const Json& Expander::definitions(std::size_t p) { return cache_.named_inputs(ws_, p); }

bool is_token_pattern(std::string_view s)
{
    if (!s.empty() && s[0] == '!')
        s.remove_prefix(1);
    return s.starts_with("{projectRoot}") || s.starts_with("{workspaceRoot}");
}

std::string names_of(const Json& defs)
{
    std::string out;
    for (const auto& [k, v] : defs.as_object())
        out += (out.empty() ? "" : ", ") + k;
    return out;
}

Status Expander::run(const Json& inputs)
{
    if (!inputs.is_array())
        return fail(fmt::format("inputs must be an array, found {}", inputs.describe()));
    for (const Json& item : inputs.as_array())
        QK_TRY_STATUS(top_level(item));
    return {};
}

Status Expander::top_level(const Json& item)
{
    std::vector<std::string> stack;
    if (item.is_string()) {
        const std::string& s = item.as_string();
        if (s.starts_with("^")) {
            std::string rest = s.substr(1);
            return dependency(rest);
        }
        return definition_item(self_, item, "", stack);
    }
    if (!item.is_object())
        return fail(fmt::format("an input must be a string or an object, found {}", item.describe()));
    const Json* input = item.find("input");
    const Json* deps = item.find("dependencies");
    const Json* projects = item.find("projects");
    if (input && input->is_string() && deps && deps->truthy()) {
        if (is_token_pattern(input->as_string()))  // a name, never a pattern, in this form
            return fail(fmt::format("input {}: `input` names a named input, not a pattern", item.dump()));
        return dependency(input->as_string());
    }
    if (const Json* fs = item.find("fileset"); fs && fs->is_string() && deps && deps->truthy()) {
        if (!is_token_pattern(fs->as_string()))
            return fail(fmt::format("input \"{}\" needs a leading {{projectRoot}}/ or {{workspaceRoot}}/",
                                    fs->as_string()));
        return dependency(fs->as_string());
    }
    if (input && input->is_string() && projects) {
        std::vector<std::string> patterns;
        if (projects->is_string())
            patterns.push_back(projects->as_string());
        else if (projects->is_array())
            for (const Json& p : projects->as_array())
                if (p.is_string())
                    patterns.push_back(p.as_string());
        auto matched = ws_.match_projects(patterns);
        if (!matched)
            return fail(fmt::format("input {}: {}", item.dump(), matched.error().message));
        if (matched->empty())
            return fail(fmt::format("input {}: `projects` matches no project", item.dump()));
        for (std::size_t p : *matched) {
            std::vector<std::string> st;
            QK_TRY_STATUS(
                named(p, input->as_string(), fmt::format("{} of {}", input->as_string(), project(p).name), st));
        }
        return {};
    }
    return definition_item(self_, item, "", stack);
}

Status Expander::definition_item(std::size_t p, const Json& item, const std::string& origin,
                                 std::vector<std::string>& stack)
{
    const Json& defs = definitions(p);
    if (item.is_string()) {
        const std::string& s = item.as_string();
        if (s.starts_with("^"))
            return fail(fmt::format("named input \"{}\" of project {}: namedInputs definitions cannot start with ^ "
                                    "(\"{}\"); put dependency inputs in the target's inputs",
                                    stack.empty() ? "?" : stack.back(), project(p).name, s));
        if (defs.find(s))
            return named(p, s, origin.empty() ? s : origin, stack);
        if (is_token_pattern(s))
            return fileset(p, s, origin.empty() ? "inputs" : origin);
        if (s.find('/') != std::string::npos || s.find('*') != std::string::npos)
            return fail(fmt::format("input \"{}\" is a file pattern without a token: start it with "
                                    "{{projectRoot}}/ or {{workspaceRoot}}/", s));
        return fail(fmt::format("input \"{}\" is not defined (named inputs of {}: {})", s, project(p).name,
                                names_of(defs)));
    }
    if (!item.is_object())
        return fail(fmt::format("an input must be a string or an object, found {}", item.describe()));
    if (!stack.empty() && (item.find("projects") || item.find("dependencies")))
        return fail(fmt::format("named input \"{}\": {} cannot name `projects` or `dependencies` inside a "
                                "namedInputs definition",
                                stack.back(), item.dump()));
    if (const Json* input = item.find("input"); input && input->is_string())
        return named(p, input->as_string(), origin.empty() ? input->as_string() : origin, stack);
    return object(p, item, origin.empty() ? "inputs" : origin);
}

Status Expander::named(std::size_t p, const std::string& name, const std::string& origin,
                       std::vector<std::string>& stack)
{
    const Json& defs = definitions(p);
    const Json* def = defs.find(name);
    if (!def)
        return fail(fmt::format("input \"{}\" is not defined for project {} (named inputs: {})", name,
                                project(p).name, names_of(defs)));
    if (std::find(stack.begin(), stack.end(), name) != stack.end())
        return fail(fmt::format("named input \"{}\" of {} includes itself (through {})", name, project(p).name,
                                fmt::join(stack, " -> ")));
    if (!def->is_array())
        return fail(fmt::format("named input \"{}\" must be an array, found {}", name, def->describe()));
    stack.push_back(name);
    for (const Json& item : def->as_array())
        QK_TRY_STATUS(definition_item(p, item, origin, stack));
    stack.pop_back();
    return {};
}

Status Expander::fileset(std::size_t p, const std::string& pattern, const std::string& origin)
{
    auto resolved = resolve_fileset_tokens(pattern, project(p));
    if (!resolved)
        return fail(resolved.error().message);
    std::optional<std::size_t> group_project;
    if (resolved->project_group)
        group_project = p;
    groups_[GroupKey{group_project, p, origin}].push_back(std::move(resolved->pattern));
    return {};
}

Status Expander::object(std::size_t p, const Json& item, const std::string& origin)
{
    auto string_member = [&](std::string_view key) -> const std::string* {
        const Json* v = item.find(key);
        return v && v->is_string() ? &v->as_string() : nullptr;
    };
    if (const std::string* fs = string_member("fileset"))
        return fileset(p, *fs, origin);
    if (const std::string* env = string_member("env")) {
        env_.insert(*env);
        return {};
    }
    if (const std::string* cmd = string_member("runtime")) {
        if (std::find(runtime_.begin(), runtime_.end(), *cmd) == runtime_.end())
            runtime_.push_back(*cmd);
        return {};
    }
    if (const Json* ext = item.find("externalDependencies")) {
        if (!ext->is_array())
            return fail(fmt::format("externalDependencies must be an array of package names, found {}", ext->describe()));
        if (p != self_)
            return {};  // only the task's own inputs choose its packages
        if (!external_)
            external_.emplace();
        for (const Json& n : ext->as_array()) {
            if (!n.is_string())
                return fail(fmt::format("externalDependencies holds {}, expected package names", n.describe()));
            external_->insert(n.as_string());
        }
        return {};
    }
    if (const std::string* glob = string_member("dependentTasksOutputFiles")) {
        const Json* t = item.find("transitive");
        dependent_outputs_.push_back({*glob, t && t->truthy()});
        return {};
    }
    if (const std::string* file = string_member("json")) {
        auto resolved = resolve_fileset_tokens(*file, project(p));
        if (!resolved)
            return fail(resolved.error().message);
        JsonInput in{resolved->pattern, {}, {}, origin};
        for (auto [key, out] : {std::pair{"fields", &in.fields}, std::pair{"excludeFields", &in.exclude_fields}}) {
            const Json* v = item.find(key);
            if (!v)
                continue;
            if (!v->is_array())
                return fail(fmt::format("json input {}: {} must be an array of field paths", *file, key));
            for (const Json& f : v->as_array()) {
                if (!f.is_string())
                    return fail(fmt::format("json input {}: {} holds {}, expected dot paths", *file, key, f.describe()));
                out->push_back(f.as_string());
            }
        }
        json_.push_back(std::move(in));
        return {};
    }
    if (item.find("workingDirectory"))
        return {};  // how Nx hashes the cwd of a run-commands target: qk keys the whole command anyway
    return fail(fmt::format("input {} is of no known form: expected fileset, input, runtime, env, "
                            "externalDependencies, dependentTasksOutputFiles or json",
                            item.dump()));
}

Status Expander::dependency(const std::string& input)
{
    if (!dependency_inputs_.insert(input).second || expansion_ == Expansion::own)
        return {};  // the key checks each dependency's part as it folds its digest
    for (std::size_t d : cache_.transitive_dependencies(graph_, self_)) {
        auto part = cache_.dependency_part(graph_, d, input);
        if (part->error)
            return fail(*part->error);
        dependency_groups_.insert(dependency_groups_.end(), part->groups.begin(), part->groups.end());
        json_.insert(json_.end(), part->json.begin(), part->json.end());
        env_.insert(part->env.begin(), part->env.end());
        for (const std::string& cmd : part->runtime)
            if (std::find(runtime_.begin(), runtime_.end(), cmd) == runtime_.end())
                runtime_.push_back(cmd);
    }
    return {};
}

Status Expander::part(const std::string& input)
{
    std::string origin = fmt::format("^{} ({})", input, project(self_).name);
    if (is_token_pattern(input))
        return fileset(self_, input, origin);
    std::vector<std::string> stack;
    return named(self_, input, origin, stack);
}

Result<InputPlan> Expander::finish()
{
    InputPlan plan;
    for (auto& [key, patterns] : groups_) {
        std::sort(patterns.begin(), patterns.end());
        patterns.erase(std::unique(patterns.begin(), patterns.end()), patterns.end());
        auto g = std::make_shared<FilesetGroup>();
        g->project = key.project;
        g->origin = key.origin;
        g->cache_key = key.project ? std::to_string(*key.project) : "ws";
        for (const std::string& p : patterns)
            g->cache_key += "\n" + p;
        auto set = cache_.compile(patterns);
        if (!set)
            return fail(fmt::format("{}: {}", key.origin == "inputs" ? "its inputs" : "input " + key.origin,
                                    set.error().message));
        g->globs = std::move(*set);
        g->patterns = std::move(patterns);
        plan.filesets.push_back(std::move(g));
    }
    plan.filesets.insert(plan.filesets.end(), dependency_groups_.begin(), dependency_groups_.end());
    // The same workspace patterns select the same files: one group, every origin named ("production,
    // ^production (b)" for the file every project's sharedGlobals names). Project groups of different
    // projects never coincide.
    std::map<std::string, std::size_t> seen;
    std::vector<std::shared_ptr<const FilesetGroup>> merged;
    for (auto& g : plan.filesets) {
        if (g->project) {
            merged.push_back(std::move(g));
            continue;
        }
        auto [at, fresh] = seen.try_emplace(g->cache_key, merged.size());
        if (fresh) {
            merged.push_back(std::move(g));
        } else {
            auto joined = std::make_shared<FilesetGroup>(*merged[at->second]);
            joined->origin += ", " + g->origin;
            merged[at->second] = std::move(joined);
        }
    }
    plan.filesets = std::move(merged);
    plan.json = std::move(json_);
    plan.env.assign(env_.begin(), env_.end());
    plan.runtime = std::move(runtime_);
    if (external_)
        plan.external_dependencies = std::vector<std::string>(external_->begin(), external_->end());
    plan.dependent_outputs = std::move(dependent_outputs_);
    plan.dependency_inputs.assign(dependency_inputs_.begin(), dependency_inputs_.end());
    return plan;
}

}  // namespace

const Json& InputCache::named_inputs(const workspace::Workspace& ws, std::size_t project)
{
    std::lock_guard l(mutex_);
    auto it = named_.find(project);
    if (it == named_.end())
        it = named_.emplace(project, ws.named_inputs_for(ws.projects()[project])).first;
    return it->second;
}

Result<workspace::GlobSet> InputCache::compile(const std::vector<std::string>& patterns)
{
    std::string key;
    for (const std::string& p : patterns)
        key += p + '\n';
    {
        std::lock_guard l(mutex_);
        if (auto it = globs_.find(key); it != globs_.end())
            return it->second;
    }
    QK_TRY(set, workspace::GlobSet::compile_fileset(patterns));
    std::lock_guard l(mutex_);
    return globs_.emplace(key, std::move(*set)).first->second;
}

std::shared_ptr<const DependencyPart> InputCache::dependency_part(const workspace::ProjectGraph& graph,
                                                                std::size_t project, const std::string& input)
{
    {
        std::lock_guard l(mutex_);
        if (auto it = parts_.find(input); it != parts_.end() && project < it->second.size() && it->second[project])
            return it->second[project];
    }
    auto part = std::make_shared<DependencyPart>();
    Expander ex(graph, project, "", *this);
    Status expanded = ex.part(input);
    auto plan = expanded ? ex.finish() : Result<InputPlan>(expanded.error());
    if (!plan) {
        part->error = plan.error().message;
    } else {
        part->groups = std::move(plan->filesets);
        part->json = std::move(plan->json);
        part->env = std::move(plan->env);
        part->runtime = std::move(plan->runtime);
    }
    std::lock_guard l(mutex_);
    auto& by_project = parts_[input];
    if (by_project.size() <= project)
        by_project.resize(std::max(project + 1, graph.workspace().projects().size()));
    if (!by_project[project])  // another thread made it meanwhile: the first is kept
        by_project[project] = std::move(part);
    return by_project[project];
}

const std::vector<std::size_t>& InputCache::transitive_dependencies(const workspace::ProjectGraph& graph,
                                                                   std::size_t project)
{
    std::lock_guard l(mutex_);
    auto it = closures_.find(project);
    if (it == closures_.end())
        it = closures_.emplace(project, graph.transitive_dependencies(project)).first;
    return it->second;
}

Result<InputPlan> plan_inputs(const workspace::ProjectGraph& graph, std::size_t project,
                              const workspace::Target& target, InputCache* cache, Expansion expansion)
{
    InputCache local;
    InputCache& shared = cache ? *cache : local;
    Expander ex(graph, project, fmt::format("{}:{}", graph.workspace().projects()[project].name, target.name), shared,
                expansion);
    QK_TRY_STATUS(ex.run(target_inputs(target)));
    return ex.finish();
}

Json target_inputs(const workspace::Target& target)
{
    return target.inputs ? *target.inputs : Json::array({Json::string("default"), Json::string("^default")});
}

}  // namespace qk::key
