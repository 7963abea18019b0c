// qk report fix's plan (report_fix_plan.hpp). Each value a task needs is placed once, in this order:
//   1. a workspace file that only tasks of one target need, into that target's existing targetDefaults
//      entry (where the workspace already says what all such tasks read) when kSharedTasks of them take
//      their inputs from it;
//   2. a workspace file, into namedInputs.sharedGlobals when kSharedTasks tasks take it;
//   3. any input, or an output in the project ({projectRoot}/...), into targetDefaults.<target> when
//      kSharedTasks tasks of that target take the key from that entry (made where missing);
//   4. what is left, into the file defining each task's target.
// targetDefaults is only ever an entry keyed by the target's name: one keyed by an executor or a glob
// stands for other targets as well, and an entry named after the target would take their place.
#include "report_fix_plan.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/audit/suggestions.hpp"
#include "qk/key/inputs.hpp"
#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/special_names.hpp"
#include "qk/workspace/json_edit.hpp"
#include "qk/workspace/task_address.hpp"
#include "report_fix_depends.hpp"
#include "report_fix_hoisted.hpp"
#include "report_fix_ignore.hpp"
#include "report_fix_network.hpp"
#include "report_fix_nx.hpp"

namespace qk::cli {

namespace {

using workspace::Json;

// One task's values to declare under one key.
struct Need {
    const workspace::Project* project = nullptr;
    const workspace::Target* target = nullptr;
    std::string key;  // "inputs" or "outputs"
    std::vector<std::string> values;
    std::set<std::string> placed;  // those an edit of nx.json gives it
    bool takes_shared = false;     // its inputs reach nx.json's sharedGlobals
    bool inherits = false;         // it takes `key` from targetDefaults.<its target's name> (or would)
    std::set<std::string> by_default;  // of `placed`, the ones in the targetDefaults entry it takes `key` from
};

// A task's dependencies on the tasks that make files it read (report_fix_depends.hpp).
struct DependencyNeed {
    const workspace::Project* project = nullptr;
    const workspace::Target* target = nullptr;
    std::vector<Producer> producers;  // each once, in the order found
};

// The JSON texts of what the target's key holds now (its inputs as Nx's default when none are named).
std::vector<std::string> current(const workspace::Target& t, std::string_view key)
{
    std::vector<std::string> out;
    if (key == kIgnoreReads) {
        for (const std::string& glob : t.ultracache_ignore_reads)
            out.push_back(workspace::json_string(glob));
        return out;
    }
    const std::optional<Json> list = key == "inputs" ? key::target_inputs(t) : t.outputs;
    if (list && list->is_array())
        for (const Json& item : list->as_array())
            out.push_back(item.dump());
    return out;
}

// The file that defines the target: its project.json, else its package.json ("nx", beside the script it
// comes from); else its project.json, a layer over whatever gave the target; "" without one.
std::string defining_file(const workspace::Project& p, const workspace::Target& t)
{
    auto defines = [&](const std::string& file) {
        return !file.empty() && std::find(t.defined_in.begin(), t.defined_in.end(), file) != t.defined_in.end();
    };
    return defines(p.project_json) ? p.project_json : defines(p.package_json) ? p.package_json : p.project_json;
}

// An edit being planned, with the roots of the projects whose files its values name.
struct Planned {
    FixEdit edit;
    std::vector<std::string> roots;

    void add(const std::string& value, const workspace::Project& p)
    {
        if (std::find(edit.values.begin(), edit.values.end(), value) == edit.values.end())
            edit.values.push_back(value);
        if (std::find(roots.begin(), roots.end(), p.root) == roots.end())
            roots.push_back(p.root);
    }
};

class Planner {
public:
    Planner(const workspace::Workspace& ws, const IndexSource& index) : ws_(ws), nx_(ws), index_(index) {}

    void gather(const audit::RunAudit& report);
    void declare_networks(const audit::RunAudit& report);
    void place();
    void place_in_projects();
    FixPlan finish() &&;

private:
    void place_in_nx_json();
    std::vector<Need*> readers(std::string_view key, const std::string& value);
    bool to_defaults(const std::string& target, std::string_view key, const std::string& value,
                     const std::vector<Need*>& readers);
    bool to_shared(const std::string& value, const std::vector<Need*>& readers);
    bool made_by_another(const workspace::Project& project, const workspace::Target& target, const std::string& value);

    const workspace::Workspace& ws_;
    NxText nx_;
    const IndexSource& index_;
    std::vector<Need> needs_;  // in the report's task order
    std::vector<DependencyNeed> dependencies_;
    // Hosts each task reached outside its declared network, as its suggestion names them.
    struct NetworkNeed {
        const workspace::Project* project = nullptr;
        const workspace::Target* target = nullptr;
        std::vector<std::string> entries;
    };
    std::vector<NetworkNeed> networks_;
    void place_networks();
    bool extend(const audit::TaskFindings& findings, const std::string& name);

    std::map<std::string, std::size_t> hoisted_;  // hoisted packages no importer was found for: tasks
    std::set<std::tuple<std::string, std::string, std::string>> extensions_;  // (importer, name, version)
    std::optional<Producers> producers_;  // made the first time a file read is not one the key can hold
    std::optional<Planned> shared_;
    std::map<std::pair<std::string, std::string>, Planned> defaults_;  // (target, key)
    std::map<std::string, std::vector<Planned>> files_;                // a project's file -> its edits
    std::vector<std::string> by_hand_;
};

void Planner::gather(const audit::RunAudit& report)
{
    const Json* shared = ws_.nx().named_inputs.find(kSharedGlobals);
    for (const audit::TaskAudit& t : report.tasks) {
        if (!t.given_suggestions || t.given_suggestions->empty())
            continue;
        auto address = workspace::parse_task_address(t.task, ws_, "");
        const workspace::Project* project = address ? ws_.find_project(address->project) : nullptr;
        const workspace::Target* target = project ? project->find_target(address->target) : nullptr;
        if (!target) {
            by_hand_.push_back(fmt::format("{}: not in today's workspace", printable(t.task)));
            continue;
        }
        const bool takes_shared = takes_shared_globals(ws_, *project, *target);
        for (const audit::Suggestion& s : *t.given_suggestions) {
            if (s.declare == "packageExtensions") {
                for (const std::string& name : s.values)
                    if (!extend(t.findings, name))
                        ++hoisted_[name];
                continue;
            }
            if (s.declare == "network") {
                networks_.push_back({project, target, s.values});
                continue;
            }
            // A file many siblings hold, read by a tool finding paths: ignoreReads, as the summary says.
            const std::string key = s.declare == "inputs" && !s.prefer_ignore.empty() ? std::string(kIgnoreReads)
                                                                                       : s.declare;
            if (s.declare != "inputs" && s.declare != "outputs") {
                by_hand_.push_back(fmt::format("{}: declare {} {}", printable(t.task), printable(s.declare),
                                               printable(fmt::format("{}", fmt::join(s.values, ", ")))));
                continue;
            }
            auto it = std::find_if(needs_.begin(), needs_.end(),
                                   [&](const Need& n) { return n.target == target && n.key == key; });
            if (it == needs_.end()) {
                const bool inherits = key == kIgnoreReads ? inherits_ignore(ws_, *target)
                                                          : inherits_by_name(ws_, *target, key);
                it = needs_.insert(needs_.end(), {project, target, key, {}, {}, takes_shared, inherits});
            }
            const bool inputs = key == "inputs";
            const Json inputs_now = key::target_inputs(*target);
            Json::Array ignoring;
            for (const std::string& glob : target->ultracache_ignore_reads)
                ignoring.push_back(Json::string(glob));
            const Json ignore_now = Json::array(std::move(ignoring));
            const Json* declared = inputs                ? &inputs_now
                                   : key == kIgnoreReads ? &ignore_now
                                   : target->outputs     ? &*target->outputs
                                                         : nullptr;
            for (const std::string& v : s.values)
                if (key == "outputs" && writes_installed(v)) {
                    by_hand_.push_back(fmt::format("{}: {} is what was installed: no output allows a task to "
                                                   "change it (enforce refuses it); reinstall, and keep the "
                                                   "task from writing there",
                                                   printable(t.task), printable(v)));
                } else if (!list_covers(declared, v) && !(inputs && takes_shared && list_covers(shared, v)) &&
                    std::find(it->values.begin(), it->values.end(), v) == it->values.end() &&
                    !(inputs && made_by_another(*project, *target, v)))
                    it->values.push_back(v);
        }
    }
}

// The packageExtensions entries that declare `name` a dependency of each package the task read that
// imports it (the report's hoistedImporters); false when it names none. An importer at a registry version
// is named with it ("minipass@3.3.6", narrowest), one from elsewhere (file:, a URL) by name alone, which
// is all pnpm's selector takes there.
bool Planner::extend(const audit::TaskFindings& findings, const std::string& name)
{
    auto found = findings.hoisted_importers.find(name);
    if (found == findings.hoisted_importers.end() || found->second.imported_by.empty())
        return false;
    for (const std::string& importer : found->second.imported_by) {
        // "name@version"; a scoped name without one starts with its only '@'.
        const std::size_t at = importer.rfind('@');
        const std::string_view version = at == 0 || at == std::string::npos ? "" : std::string_view(importer).substr(at + 1);
        const bool registry = !version.empty() && std::isdigit(static_cast<unsigned char>(version[0])) &&
                              version.find_first_of(":/") == std::string_view::npos;
        extensions_.emplace(registry || version.empty() ? importer : importer.substr(0, at), name,
                            found->second.installed);
    }
    return true;
}

// Whether `value` (an input suggested for the target) names a file the key cannot hold, git-ignored: then
// it is said what to do instead of writing an input that keys nothing, and the task that makes it (by
// its declared outputs) goes into dependsOn.
bool Planner::made_by_another(const workspace::Project& project, const workspace::Target& target,
                              const std::string& value)
{
    auto path = value_path(value, project);
    if (!path)
        return false;
    // Only a file there that the index leaves out is git-ignored; one not there is left as an input.
    std::error_code absent;
    if (!std::filesystem::is_regular_file(ws_.root() / *path, absent))
        return false;
    const key::FileIndex* files = index_();
    if (!files || files->find(*path))
        return false;
    if (!producers_)
        producers_.emplace(ws_);
    auto producer = producers_->of(*path, target);
    if (!producer) {
        by_hand_.push_back(fmt::format("{}:{}: {} is git-ignored, so an input would key nothing, and no target "
                                       "declares it as an output: declare the task that makes it in dependsOn, "
                                       "and the file in that task's outputs",
                                       printable(project.name), printable(target.name), printable(*path)));
        return true;
    }
    if (depends_on(project, target, *producer))
        return true;
    auto it = std::find_if(dependencies_.begin(), dependencies_.end(),
                           [&](const DependencyNeed& d) { return d.target == &target; });
    if (it == dependencies_.end())
        it = dependencies_.insert(dependencies_.end(), {&project, &target, {}});
    if (std::none_of(it->producers.begin(), it->producers.end(),
                     [&](const Producer& p) { return p.target == producer->target; }))
        it->producers.push_back(*producer);
    return true;
}

std::vector<Need*> Planner::readers(std::string_view key, const std::string& value)
{
    std::vector<Need*> out;
    for (Need& n : needs_)
        if (n.key == key && !n.placed.contains(value) &&
            std::find(n.values.begin(), n.values.end(), value) != n.values.end())
            out.push_back(&n);
    return out;
}

// Into targetDefaults.<target>.<key>, for the readers of that target taking the key from that entry.
bool Planner::to_defaults(const std::string& target, std::string_view key, const std::string& value,
                          const std::vector<Need*>& readers)
{
    std::vector<Need*> taking;
    for (Need* n : readers)
        if (n->target->name == target && n->inherits)
            taking.push_back(n);
    const bool ignore = key == kIgnoreReads;
    if (taking.size() < kSharedTasks ||
        !(ignore ? nx_.takes_effect({"targetDefaults", target, kUltracache, key})
                 : nx_.takes_effect({"targetDefaults", target, key})))
        return false;
    auto [it, made] = defaults_.try_emplace({target, std::string(key)});
    if (made) {
        std::vector<std::string> path{"targetDefaults", target};
        add_holder(path, key);
        it->second.edit = {ws_.files().nx_json, std::move(path), std::string(key), {}, {}};
        const Json* entry = ws_.nx().target_defaults.find(target);
        if (!(entry && !ignore && entry->find(key)))  // what its tasks took: Nx's default inputs, no outputs
            it->second.edit.inherited = current(workspace::Target{}, key);
    }
    for (Need* n : taking) {
        it->second.add(value, *n->project);
        n->placed.insert(value);
        n->by_default.insert(value);
    }
    return true;
}

bool Planner::to_shared(const std::string& value, const std::vector<Need*>& readers)
{
    std::vector<Need*> taking;
    for (Need* n : readers)
        if (n->takes_shared)
            taking.push_back(n);
    // Only where nx.json's own text holds the list qk reads: not the base it extends, which writing
    // namedInputs here would replace whole.
    if (taking.size() < kSharedTasks || !nx_.takes_effect({"namedInputs", kSharedGlobals}))
        return false;
    if (!shared_)
        shared_ = Planned{{ws_.files().nx_json, {"namedInputs"}, std::string(kSharedGlobals), {}, {}}, {}};
    for (Need* n : taking) {
        shared_->add(value, *n->project);
        n->placed.insert(value);
    }
    return true;
}

void Planner::place()
{
    // A task whose project's file gets the key takes it from there, no longer from targetDefaults: planned
    // again without it until no such task is left among the entries' takers, so that the plan is made
    // against the configuration as it will be after its edits and one round of them is enough.
    for (bool again = true; again;) {
        shared_.reset();
        defaults_.clear();
        for (Need& n : needs_) {
            n.placed.clear();
            n.by_default.clear();
        }
        place_in_nx_json();
        again = false;
        for (Need& n : needs_) {
            const bool left = std::any_of(n.values.begin(), n.values.end(),
                                          [&](const std::string& v) { return !n.placed.contains(v); });
            if (left && !n.by_default.empty()) {
                n.inherits = false;
                again = true;
            }
        }
    }
}

void Planner::place_in_nx_json()
{
    for (std::string_view key : {std::string_view("inputs"), std::string_view("outputs"), kIgnoreReads}) {
        std::vector<std::string> values;  // each once, in the order the tasks name them
        for (const Need& n : needs_)
            if (n.key == key)
                for (const std::string& v : n.values)
                    if (std::find(values.begin(), values.end(), v) == values.end())
                        values.push_back(v);
        for (const std::string& v : values) {
            std::vector<Need*> r = readers(key, v);
            if (r.empty())
                continue;
            std::set<std::string> targets;
            for (const Need* n : r)
                targets.insert(n->target->name);
            if (key == "inputs" && v.starts_with("{workspaceRoot}/")) {
                const std::string& only = *targets.begin();
                if (targets.size() == 1 && ws_.nx().target_defaults.find(only) && to_defaults(only, key, v, r))
                    continue;
                if (to_shared(v, r))
                    r = readers(key, v);
            }
            // An output in targetDefaults is every such task's: only a path in each task's own project.
            if (key == "outputs" && !v.starts_with("{projectRoot}/"))
                continue;
            for (const std::string& target : targets)
                to_defaults(target, key, v, r);
        }
    }
}

// What the tasks of a target that declares no network reached, as its list (asked for: --declare-network).
void Planner::declare_networks(const audit::RunAudit& report)
{
    for (const audit::TaskAudit& t : report.tasks) {
        if (t.findings.network.empty())
            continue;
        auto address = workspace::parse_task_address(t.task, ws_, "");
        const workspace::Project* project = address ? ws_.find_project(address->project) : nullptr;
        const workspace::Target* target = project ? project->find_target(address->target) : nullptr;
        if (target && target->sandbox.network.mode == workspace::NetworkDeclaration::Mode::undeclared)
            networks_.push_back({project, target, t.findings.network});
    }
}

// Each target's network once, whatever tasks of it (configurations) reached, into its defining file.
void Planner::place_networks()
{
    std::map<const workspace::Target*, std::vector<std::string>> entries;
    for (const NetworkNeed& n : networks_) {
        auto& all = entries[n.target];
        all.insert(all.end(), n.entries.begin(), n.entries.end());
    }
    for (const NetworkNeed& n : networks_) {
        auto it = entries.find(n.target);
        if (it == entries.end())
            continue;  // placed with an earlier task of the target
        const std::string file = defining_file(*n.project, *n.target);
        if (file.empty())
            by_hand_.push_back(fmt::format("{}:{}: \"qk:sandbox\": {{\"network\": [...]}} adding {} (no file of "
                                           "its project defines the target)",
                                           printable(n.project->name), printable(n.target->name),
                                           printable(fmt::format("{}", fmt::join(it->second, ", ")))));
        else if (auto edit = network_edit(*n.project, *n.target, file, it->second))
            files_[file].push_back({std::move(*edit), {}});
        entries.erase(it);
    }
}

void Planner::place_in_projects()
{
    place_networks();
    // dependsOn: the project's list takes the place of the targetDefaults one, so it starts with what the
    // target has now.
    for (const DependencyNeed& d : dependencies_) {
        const std::string file = defining_file(*d.project, *d.target);
        std::vector<std::string> entries;
        for (const Producer& p : d.producers)
            entries.push_back(p.depends_on_json());
        if (file.empty()) {
            by_hand_.push_back(fmt::format("{}:{}: \"dependsOn\": {} (no file of its project defines the target)",
                                           printable(d.project->name), printable(d.target->name),
                                           printable(fmt::format("{}", fmt::join(entries, ", ")))));
            continue;
        }
        std::vector<std::string> path{"targets", d.target->name};
        if (file == d.project->package_json)
            path.insert(path.begin(), "nx");
        std::vector<std::string> now;
        for (const workspace::DependsOn& entry : d.target->depends_on)
            now.push_back(entry.raw.dump());
        files_[file].push_back({{file, std::move(path), "dependsOn", std::move(now), std::move(entries), true}, {}});
    }
    for (Need& n : needs_) {
        std::vector<std::string> left;
        for (const std::string& v : n.values)
            if (!n.placed.contains(v))
                left.push_back(v);
        if (left.empty())
            continue;
        const std::string file = defining_file(*n.project, *n.target);
        if (file.empty()) {
            by_hand_.push_back(fmt::format("{}:{}: \"{}\": {} (no file of its project defines the target)",
                                           printable(n.project->name), printable(n.target->name), n.key,
                                           printable(fmt::format("{}", fmt::join(left, ", ")))));
            continue;
        }
        std::vector<std::string> path{"targets", n.target->name};
        if (file == n.project->package_json)
            path.insert(path.begin(), "nx");
        add_holder(path, n.key);
        Planned planned{{file, std::move(path), n.key, current(*n.target, n.key), {}}, {}};
        for (const std::string& v : left)
            planned.add(v, *n.project);
        files_[file].push_back(std::move(planned));
    }
}

FixPlan Planner::finish() &&
{
    for (std::string& line : hoisted_lines(hoisted_, ws_))
        by_hand_.push_back(std::move(line));
    FixPlan plan;
    for (const auto& [importer, name, version] : extensions_)
        plan.extensions.push_back({importer, name, version});
    if (!plan.extensions.empty())
        plan.extensions_file = package_extensions_file(ws_);
    auto take = [&](Planned& p) {
        if (p.edit.key == "inputs" || p.edit.key == kSharedGlobals)  // a glob is for what a tool reads
            p.edit.values = fold_into_globs(p.edit.values, p.roots, index_);
        else if (p.edit.key == kIgnoreReads)
            p.edit.values = fold_deep(p.edit.values);
        plan.edits.push_back(std::move(p.edit));
    };
    if (shared_)
        take(*shared_);
    for (auto& [target_key, p] : defaults_)
        take(p);
    for (auto& [file, edits] : files_)
        for (Planned& p : edits)
            take(p);
    plan.by_hand = std::move(by_hand_);
    return plan;
}

}  // namespace

FixPlan plan_report_fix(const audit::RunAudit& report, const workspace::Workspace& ws, const IndexSource& index,
                        bool declare_network)
{
    Planner planner(ws, index);
    planner.gather(report);
    if (declare_network)
        planner.declare_networks(report);
    planner.place();
    planner.place_in_projects();
    return std::move(planner).finish();
}

}  // namespace qk::cli
