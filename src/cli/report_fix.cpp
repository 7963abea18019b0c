// qk report fix (report_fix.hpp): the report's suggestions to declare inputs and outputs, gathered per
// project.json and target, spliced into the file's text (workspace/json_edit.hpp). What cannot be written
// so (a target without a project.json entry, other kinds of suggestion) is said, to do by hand.
#include "report_fix.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/key/inputs.hpp"
#include "qk/report/report_reader.hpp"
#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/unified_diff.hpp"
#include "qk/workspace/json_edit.hpp"
#include "qk/workspace/task_address.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::cli {

namespace {

// The values to add to one key ("inputs", "outputs") of one target, in the order suggested.
struct Addition {
    std::string target, key;
    std::vector<std::string> values;
};

bool holds(const std::optional<workspace::Json>& list, const std::string& value)
{
    if (!list || !list->is_array())
        return false;
    for (const workspace::Json& item : list->as_array())
        if (item.is_string() && item.as_string() == value)
            return true;
    return false;
}

// What the target's key holds now, as JSON texts: written out in full when the file does not name the key,
// since naming it replaces what targetDefaults or Nx's default gave.
std::vector<std::string> current(const workspace::Target& t, const std::string& key)
{
    std::vector<std::string> out;
    const std::optional<workspace::Json> list = key == "inputs" ? key::target_inputs(t) : t.outputs;
    if (list && list->is_array())
        for (const workspace::Json& item : list->as_array())
            out.push_back(item.dump());
    return out;
}

// `value` nested in objects named by `keys`, innermost last: {"targets": {"build": VALUE}}.
std::string nested(std::span<const std::string> keys, const std::string& value)
{
    std::string out = value;
    for (auto it = keys.rbegin(); it != keys.rend(); ++it)
        out = "{" + workspace::json_string(*it) + ": " + out + "}";
    return out;
}

// The edit of `a` in `text`, at the target object `path` names (["targets", "build"] in a project.json,
// ["nx", "targets", "build"] in a package.json), making the objects on the way that are missing.
Result<std::string> apply(const std::string& text, const std::string& file, const std::vector<std::string>& path,
                          const Addition& a, const workspace::Target& target)
{
    QK_TRY(doc, workspace::parse_json(text, file, workspace::TrailingCommas::allow));
    std::vector<std::string> items;
    for (const std::string& v : a.values)
        items.push_back(workspace::json_string(v));
    std::vector<std::string> all = current(target, a.key);
    all.insert(all.end(), items.begin(), items.end());
    std::string list = "[";
    for (std::size_t i = 0; i < all.size(); ++i)
        list += (i ? ", " : "") + all[i];
    list += "]";
    const workspace::Json* object = &*doc;
    for (std::size_t i = 0; i < path.size(); ++i) {
        const workspace::Json* next = object->find(path[i]);
        if (!next) {
            std::span<const std::string> rest(path.begin() + static_cast<std::ptrdiff_t>(i) + 1, path.end());
            std::string leaf = "{" + workspace::json_string(a.key) + ": " + list + "}";
            return workspace::insert_member(text, *object, path[i], nested(rest, leaf));
        }
        if (!next->is_object())
            return error(fmt::format("{}:{}:{}: {} is not an object to add {} to", file, next->line(), next->column(),
                                     path[i], a.key));
        object = next;
    }
    if (const workspace::Json* existing = object->find(a.key); existing && existing->is_array())
        return workspace::append_to_array(text, *existing, items);
    return workspace::insert_member(text, *object, a.key, list);
}

constexpr const char* kShared = "sharedGlobals";
// A file this many tasks need goes once into nx.json's namedInputs.sharedGlobals (where their inputs
// reach it), rather than into each target.
constexpr std::size_t kSharedTasks = 3;

// Whether `inputs` (a target's, or a named input's entries) reach the named input `name` through the
// project's named inputs, as Nx expands them (a "^" entry is the dependencies', not the task's own).
bool reaches(const workspace::Json& inputs, const workspace::Json& named, std::string_view name, int depth = 0)
{
    if (!inputs.is_array() || depth > 16)
        return false;
    for (const workspace::Json& item : inputs.as_array()) {
        if (!item.is_string())
            continue;
        const std::string& entry = item.as_string();
        if (entry == name)
            return true;
        if (const workspace::Json* def = named.find(entry); def && reaches(*def, named, name, depth + 1))
            return true;
    }
    return false;
}

// Whether the task's own inputs take nx.json's sharedGlobals: declared there as an array, not redefined
// by the project, and reached from the target's inputs (or Nx's default ones).
bool takes_shared_globals(const workspace::Workspace& ws, const workspace::Project& project,
                          const workspace::Target& target)
{
    const workspace::Json* shared = ws.nx().named_inputs.find(kShared);
    if (!shared || !shared->is_array() || (project.named_inputs.is_object() && project.named_inputs.find(kShared)))
        return false;
    return reaches(key::target_inputs(target), ws.named_inputs_for(project), kShared);
}

}  // namespace

int run_report_fix(const ReportFixOptions& options)
{
    audit::RunAudit found = or_fatal(report::load_sandbox_report(options.report));
    auto root = or_fatal(workspace::Workspace::find_root(options.directory));
    workspace::Workspace ws = or_fatal(workspace::Workspace::load(root));
    std::map<std::string, std::vector<Addition>> by_file;  // project.json -> additions, in task order
    std::map<std::string, const workspace::Target*> targets;  // file + target -> the merged target
    std::vector<std::string> by_hand;
    // The workspace files many tasks need, counted over the tasks whose inputs take sharedGlobals.
    std::map<std::string, std::size_t> wanted_by;
    for (const audit::TaskAudit& t : found.tasks) {
        auto address = t.given_suggestions ? workspace::parse_task_address(t.task, ws, "")
                                           : Result<workspace::TaskAddress>(error("no suggestions"));
        const workspace::Project* project = address ? ws.find_project(address->project) : nullptr;
        const workspace::Target* target = project ? project->find_target(address->target) : nullptr;
        if (!target || !takes_shared_globals(ws, *project, *target))
            continue;
        std::set<std::string> mine;
        for (const audit::Suggestion& s : *t.given_suggestions)
            if (s.declare == "inputs")
                for (const std::string& v : s.values)
                    if (v.starts_with("{workspaceRoot}/") && !holds(target->inputs, v))
                        mine.insert(v);
        for (const std::string& v : mine)
            ++wanted_by[v];
    }
    std::vector<std::string> shared;
    for (const auto& [value, tasks] : wanted_by)
        if (tasks >= kSharedTasks && !holds(*ws.nx().named_inputs.find(kShared), value))
            shared.push_back(value);
    for (const audit::TaskAudit& t : found.tasks) {
        if (!t.given_suggestions || t.given_suggestions->empty())
            continue;
        auto address = workspace::parse_task_address(t.task, ws, "");
        const workspace::Project* project = address ? ws.find_project(address->project) : nullptr;
        const workspace::Target* target = project ? project->find_target(address->target) : nullptr;
        if (!target) {
            by_hand.push_back(fmt::format("{}: not in today's workspace", printable(t.task)));
            continue;
        }
        for (const audit::Suggestion& s : *t.given_suggestions) {
            if (s.declare != "inputs" && s.declare != "outputs") {
                by_hand.push_back(fmt::format("{}: declare {} {}", printable(t.task), s.declare,
                                              printable(fmt::format("{}", fmt::join(s.values, ", ")))));
                continue;
            }
            // The file that defines the target: its project.json, else its package.json ("nx", beside the
            // script the target comes from).
            auto defines = [&](const std::string& file) {
                return !file.empty() &&
                       std::find(target->defined_in.begin(), target->defined_in.end(), file) != target->defined_in.end();
            };
            std::string file = defines(project->project_json) ? project->project_json
                               : defines(project->package_json) ? project->package_json
                               : project->project_json;
            if (file.empty()) {
                by_hand.push_back(fmt::format("{}: \"{}\": {} (no file of its project defines the target)",
                                              printable(t.task), s.declare,
                                              printable(fmt::format("{}", fmt::join(s.values, ", ")))));
                continue;
            }
            std::vector<Addition>& adds = by_file[file];
            auto it = std::find_if(adds.begin(), adds.end(),
                                   [&](const Addition& a) { return a.target == target->name && a.key == s.declare; });
            if (it == adds.end())
                it = adds.insert(adds.end(), {target->name, s.declare, {}});
            bool via_shared = s.declare == "inputs" && takes_shared_globals(ws, *project, *target);
            for (const std::string& v : s.values)
                if (!(via_shared && std::find(shared.begin(), shared.end(), v) != shared.end()) &&
                    !holds(s.declare == "inputs" ? target->inputs : target->outputs, v) &&
                    std::find(it->values.begin(), it->values.end(), v) == it->values.end())
                    it->values.push_back(v);
            targets[file + "\n" + target->name] = target;
        }
    }
    std::string out;
    if (!shared.empty()) {
        const std::string file = ws.files().nx_json;
        const std::string path = (root / file).string();
        auto before = read_file(path);
        if (!before)
            throw FatalError(before.error());
        auto doc = workspace::parse_json(*before, file, workspace::TrailingCommas::allow);
        const workspace::Json* named = doc ? doc->find("namedInputs") : nullptr;
        const workspace::Json* list = named ? named->find(kShared) : nullptr;
        std::vector<std::string> items;
        for (const std::string& v : shared)
            items.push_back(workspace::json_string(v));
        auto edited = list ? workspace::append_to_array(*before, *list, items)
                           : Result<std::string>(error("nx.json's namedInputs.sharedGlobals comes from the file it extends"));
        if (!edited) {
            by_hand.push_back(fmt::format("{}: add {} to namedInputs.{}: {}", file,
                                          printable(fmt::format("{}", fmt::join(shared, ", "))), kShared,
                                          printable(edited.error().message)));
        } else if (options.write) {
            if (auto st = write_file_atomically(path, *edited); !st)
                throw FatalError(st.error());
            out += fmt::format("qk report fix: wrote {}\n", printable(file));
        } else {
            out += unified_diff(*before, *edited, file);
        }
    }
    for (const auto& [file, adds] : by_file) {
        const std::string path = (root / file).string();
        auto before = read_file(path);
        if (!before)
            throw FatalError(before.error());
        std::string text = *before;
        for (const Addition& a : adds) {
            if (a.values.empty())
                continue;
            std::vector<std::string> path{"targets", a.target};
            if (file.ends_with("package.json"))
                path.insert(path.begin(), "nx");
            auto edited = apply(text, file, path, a, *targets.at(file + "\n" + a.target));
            if (!edited) {
                by_hand.push_back(fmt::format("{}: {}", printable(file), printable(edited.error().message)));
                continue;
            }
            text = std::move(*edited);
        }
        if (text == *before)
            continue;
        if (options.write) {
            if (auto st = write_file_atomically(path, text); !st)
                throw FatalError(st.error());
            out += fmt::format("qk report fix: wrote {}\n", printable(file));
        } else {
            out += unified_diff(*before, text, file);
        }
    }
    // The diff alone on stdout, so that `qk report fix r.json | git apply` takes it; the rest on stderr.
    std::string notes;
    if (out.empty())
        notes = "qk report fix: nothing to write: the declarations already hold what the report suggests\n";
    for (const std::string& line : by_hand)
        notes += "qk report fix: by hand: " + line + "\n";
    (void)write_all(STDOUT_FILENO, out);  // a closed stdout changes nothing written
    (void)write_all(STDERR_FILENO, notes);
    return 0;
}

}  // namespace qk::cli
