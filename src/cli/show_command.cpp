#include "show_command.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "show_key.hpp"
#include "qk/util/json_writer.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/result.hpp"
#include "qk/rules/rules.hpp"
#include "qk/sandbox/task_rules.hpp"
#include "qk/run/scratch.hpp"
#include "qk/key/session.hpp"

namespace qk::cli {

namespace {

// The text forms escape every name from the workspace as they format it (qk::printable): a directory or
// a script named with terminal escapes is shown, not played. The JSON forms keep the bytes.
void print(const std::string& s)
{
    if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size())
        throw FatalError(sys_error("cannot write to standard output"));
}

int show_projects(const key::Session& s, bool json)
{
    if (json) {
        JsonWriter w;
        w.begin_array();
        for (const auto& p : s.workspace().projects())
            w.value(p.name);
        w.end_array();
        print(w.str() + "\n");
        return 0;
    }
    for (const auto& p : s.workspace().projects())
        print(printable(p.name) + "\n");
    return 0;
}

// An input, output or dependsOn entry as written: a string as itself, an object as compact JSON.
std::string entry_text(const workspace::Json& entry)
{
    return entry.is_string() ? entry.as_string() : entry.dump();
}

std::string entries_text(const workspace::Json& array)
{
    std::vector<std::string> items;
    for (const workspace::Json& e : array.as_array())
        items.push_back(entry_text(e));
    return items.empty() ? "(none)" : printable_join(items, ", ");
}

// A target's inputs, outputs and dependsOn, one line each, as the merged configuration has them
// (targetDefaults applied, tokens unexpanded): what `--json` holds, and `qk show task` resolves.
std::string target_lists_text(const workspace::Target& t)
{
    std::string text;
    if (t.inputs)
        text += fmt::format("      inputs     {}\n", entries_text(*t.inputs));
    else
        text += "      inputs     default, ^default  (none declared)\n";
    if (t.outputs)
        text += fmt::format("      outputs    {}\n", entries_text(*t.outputs));
    if (!t.depends_on.empty()) {
        std::vector<std::string> deps;
        for (const workspace::DependsOn& d : t.depends_on)
            deps.push_back(entry_text(d.raw));
        text += fmt::format("      dependsOn  {}\n", printable_join(deps, ", "));
    }
    return text;
}

int show_project(const key::Session& s, const std::string& name, bool json)
{
    const workspace::Workspace& ws = s.workspace();
    const workspace::Project* p = or_fatal(ws.project(name));
    std::size_t index = *ws.project_index(name);
    std::vector<std::string> deps;
    for (std::size_t d : s.graph().dependencies(index))
        deps.push_back(ws.projects()[d].name);
    if (json) {
        // The merged configuration, as `nx show project --json` prints it, plus the graph's edges.
        workspace::Json out = p->raw();
        workspace::Json d = workspace::Json::array();
        for (const std::string& n : deps)
            d.as_array().push_back(workspace::Json::string(n));
        out.set("dependencies", std::move(d));
        print(out.dump() + "\n");
        return 0;
    }
    std::string text = fmt::format("{}\n  root          {}\n", printable(p->name), printable(p->root));
    if (!p->package_name.empty())
        text += fmt::format("  package       {}@{}\n", printable(p->package_name), printable(p->package_version));
    if (!p->tags.empty())
        text += fmt::format("  tags          {}\n", printable_join(p->tags, ", "));
    text += fmt::format("  depends on    {}\n", deps.empty() ? "(nothing)" : printable_join(deps, ", "));
    std::vector<std::string> files;
    for (const std::string* f : {&p->package_json, &p->project_json, &p->project_local_json})
        if (!f->empty())
            files.push_back(*f);
    text += fmt::format("  configured in {}\n  targets\n", printable_join(files, ", "));
    for (const workspace::Target& t : p->targets) {
        text += fmt::format("    {}  ({}{})\n", printable(t.name), printable(t.executor), t.cache ? ", cached" : "");
        for (const std::string& c : t.run.commands)
            text += fmt::format("      $ {}\n", printable(c));
        if (!t.run.problem.empty())
            text += fmt::format("      cannot run: {}\n", printable(t.run.problem));
        text += target_lists_text(t);
    }
    print(text);
    return 0;
}

const char* access_name(rules::Grant::Access a) { return a == rules::Grant::Access::read ? "read" : "read, write"; }

// `qk show task P:T --rules`: one line per rule, the access, the paths and why; then what enforce would
// hand Landlock now, path by path, from the same rules.
std::string rules_text(const std::string& id, const rules::Rules& rules)
{
    std::string text = fmt::format("{}: what the sandbox lets it do in the workspace\n", printable(id));
    for (const rules::RuleLine& line : rules.describe())
        text += fmt::format("  {:<15} {}\n  {:<15}   ({})\n", line.access, printable(line.path), "",
                            printable(line.why));
    text += "what enforce allows as it starts (Landlock; a directory with everything in it):\n";
    for (const rules::Grant& g : rules.grants())
        text += fmt::format("  {:<15} {}{}  ({})\n", access_name(g.access), g.path.empty() ? "." : printable(g.path),
                            g.directory ? "/" : "", rules::class_name(g.why));
    text += fmt::format("  {:<15} {}\n", "read, write", "everything outside the workspace (qk is not hermetic)");
    return text;
}

std::string rules_json(const std::string& id, const rules::Rules& rules)
{
    JsonWriter w;
    w.begin_object().key("task").value(id).key("rules").begin_array();
    for (const rules::RuleLine& line : rules.describe())
        w.begin_object().key("access").value(line.access).key("paths").value(line.path).key("why").value(line.why).end_object();
    w.end_array().key("enforce").begin_array();
    for (const rules::Grant& g : rules.grants())
        w.begin_object()
            .key("access")
            .value(access_name(g.access))
            .key("path")
            .value(g.path)
            .key("directory")
            .value(g.directory)
            .key("why")
            .value(rules::class_name(g.why))
            .end_object();
    w.end_array().end_object();
    return w.str() + "\n";
}

int show_task(key::Session& s, const std::string& written, bool json, bool with_rules)
{
    workspace::TaskRequest request;
    request.task = written;  // read against the workspace: targets may hold colons
    or_fatal(s.plan(request));
    for (const std::string& note : s.tasks().notes())
        std::fprintf(stderr, "qk: %s\n", printable_message(note).c_str());
    const auto& tasks = s.tasks().tasks();
    auto asked = std::find_if(tasks.begin(), tasks.end(), [](const workspace::Task& t) { return t.requested; });
    if (asked == tasks.end())
        throw FatalError(fmt::format("internal: task {} is not in its own graph", written));
    const std::string id = asked->id;
    std::optional<key::TaskKey> shown;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        auto k = s.keys().key(i);
        if (!k)
            throw FatalError(k.error());
        if (tasks[i].id == id)
            shown = or_fatal(s.keys().expanded(i));  // every file it holds, its dependencies' too
    }
    if (!shown)
        throw FatalError(fmt::format("internal: task {} is not in its own graph", id));
    (void)s.files().save_hash_cache();  // a cache that cannot be written only costs time
    if (with_rules) {
        std::size_t i = *s.tasks().index(id);
        const workspace::Task& t = tasks[i];
        auto scratch = or_fatal(run::resolve_scratch(s.workspace(), s.workspace().projects()[t.project], *t.target));
        auto installed = or_fatal(rules::InstalledPackages::load(s.workspace().root(), s.keys().lockfile()));
        auto rules = or_fatal(sandbox::task_rules(s, i, scratch, installed));
        print(json ? rules_json(id, rules) : rules_text(id, rules));
        return 0;
    }
    std::vector<std::string> depends_on;
    for (std::size_t d : s.tasks().find(id)->deps)
        depends_on.push_back(tasks[d].id);
    print(json ? key_json(s, *shown, depends_on) : key_text(s, *shown, depends_on));
    return 0;
}

}  // namespace

int run_show(const ShowOptions& options)
{
    auto session = or_fatal(key::Session::open(options.directory));
    switch (options.what) {
    case ShowOptions::What::projects:
        return show_projects(*session, options.json);
    case ShowOptions::What::project:
        return show_project(*session, options.name, options.json);
    case ShowOptions::What::task:
        return show_task(*session, options.name, options.json, options.rules);
    }
    return 2;
}

}  // namespace qk::cli
