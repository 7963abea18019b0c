// qk report fix (report_fix.hpp): the report's suggestions to declare inputs and outputs, gathered per
// project.json and target, spliced into the file's text (workspace/json_edit.hpp). What cannot be written
// so (a target without a project.json entry, other kinds of suggestion) is said, to do by hand.
#include "report_fix.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
    const std::optional<workspace::Json>& list = key == "inputs" ? t.inputs : t.outputs;
    if (list && list->is_array()) {
        for (const workspace::Json& item : list->as_array())
            out.push_back(item.dump());
    } else if (key == "inputs") {
        out = {"\"default\"", "\"^default\""};  // Nx's inputs when none are declared
    }
    return out;
}

Result<std::string> apply(const std::string& text, const std::string& file, const Addition& a,
                          const workspace::Target& target)
{
    QK_TRY(doc, workspace::parse_json(text, file, workspace::TrailingCommas::allow));
    const workspace::Json* targets = doc->find("targets");
    const workspace::Json* object = targets ? targets->find(a.target) : nullptr;
    if (!object || !object->is_object())
        return error(fmt::format("{} has no \"targets\".\"{}\" object to add {} to", file, a.target, a.key));
    std::vector<std::string> items;
    for (const std::string& v : a.values)
        items.push_back(workspace::json_string(v));
    if (const workspace::Json* list = object->find(a.key); list && list->is_array())
        return workspace::append_to_array(text, *list, items);
    std::vector<std::string> all = current(target, a.key);
    all.insert(all.end(), items.begin(), items.end());
    std::string value = "[";
    for (std::size_t i = 0; i < all.size(); ++i)
        value += (i ? ", " : "") + all[i];
    return workspace::insert_member(text, *object, a.key, value + "]");
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
            if (project->project_json.empty()) {
                by_hand.push_back(fmt::format("{}: \"{}\": {} (it has no project.json: add it to its package.json's "
                                              "\"nx\")",
                                              printable(t.task), s.declare, printable(fmt::format("{}", fmt::join(s.values, ", ")))));
                continue;
            }
            std::vector<Addition>& adds = by_file[project->project_json];
            auto it = std::find_if(adds.begin(), adds.end(),
                                   [&](const Addition& a) { return a.target == target->name && a.key == s.declare; });
            if (it == adds.end())
                it = adds.insert(adds.end(), {target->name, s.declare, {}});
            for (const std::string& v : s.values)
                if (!holds(s.declare == "inputs" ? target->inputs : target->outputs, v) &&
                    std::find(it->values.begin(), it->values.end(), v) == it->values.end())
                    it->values.push_back(v);
            targets[project->project_json + "\n" + target->name] = target;
        }
    }
    std::string out;
    for (const auto& [file, adds] : by_file) {
        const std::string path = (root / file).string();
        auto before = read_file(path);
        if (!before)
            throw FatalError(before.error());
        std::string text = *before;
        for (const Addition& a : adds) {
            if (a.values.empty())
                continue;
            auto edited = apply(text, file, a, *targets.at(file + "\n" + a.target));
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
