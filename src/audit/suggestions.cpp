#include "qk/audit/suggestions.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "qk/audit/finding_kinds.hpp"
#include "qk/util/path_parts.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/special_names.hpp"

namespace qk::audit {
namespace {

// The topmost of `dirs` that holds `path` (or is it), if any.
const std::string* holder_in(const std::vector<std::string>& dirs, const std::string& path)
{
    const std::string* best = nullptr;
    for (const std::string& d : dirs)
        if (is_within(path, d) && (!best || d.size() < best->size()))
            best = &d;
    return best;
}

// The topmost directory the task created that holds `path` (or is it), if any.
const std::string* created_holder(const TaskFindings& f, const std::string& path)
{
    return holder_in(f.created_directories, path);
}

// What follows the root of a project other than the root one in `path`, when it lies there. A root of
// "" is none known (a TaskAudit made without its project), not the workspace root, which is ".".
std::optional<std::string_view> in_project(std::string_view path, std::string_view root)
{
    if (root.empty() || root == ".")
        return std::nullopt;
    return relative_under(path, root);
}

// A workspace-relative path as a target writes it: under its project's root with {projectRoot}.
std::string token_path(const std::string& path, const std::string& project_root)
{
    if (project_root == ".")
        return "{projectRoot}/" + path;  // the root project: the whole workspace is its own
    if (auto rest = in_project(path, project_root))
        return "{projectRoot}/" + std::string(*rest);
    return "{workspaceRoot}/" + path;
}

void sort_unique(std::vector<std::string>& v)
{
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

// A suggestion for `kind`, declared where the table of kinds says.
void add(std::vector<Suggestion>& out, const FindingKind& kind, std::vector<std::string> values)
{
    if (values.empty())
        return;
    sort_unique(values);
    std::size_t paths = values.size();
    out.push_back({kind.name, kind.declare, std::move(values), {}, paths, {}, {}});
}

// Whether `path`, or a directory holding it, is in `written`: found by its ancestors, as a task may
// write thousands of files.
bool written_at_or_above(const std::set<std::string, std::less<>>& written, const std::string& path)
{
    for (std::size_t end = path.size(); end != std::string::npos && end > 0; end = path.rfind('/', end - 1))
        if (written.contains(std::string_view(path).substr(0, end)))
            return true;
    return false;
}

// What a task read that it must declare itself, as inputs: not a file made for one run (it will not be
// there next run), not what it wrote itself (read back from a file or a directory it wrote outside its
// outputs: declaring that output covers the read), not what the run declares once for many tasks. The
// same file read in many sibling directories is one glob; one that a tool reads only to find paths is a
// suggestion of its own that says ignoreReads likely fits better.
void read_suggestions(std::vector<Suggestion>& out, const FindingKind& kind, const std::vector<std::string>& paths,
                      const TaskAudit& t, const std::set<std::string, std::less<>>& written, const RunAudit* run)
{
    std::vector<std::string> own;
    for (const std::string& p : paths) {
        if (temporary_name(p) || std::binary_search(t.findings.temporary_files.begin(),
                                                    t.findings.temporary_files.end(), p))
            continue;
        if (written_at_or_above(written, p) || (run && run->shared(p)))
            continue;
        own.push_back(p);
    }
    Suggestion plain{kind.name, kind.declare, {}, {}, 0, {}, {}};
    std::vector<Suggestion> preferred;
    for (const SiblingGroup& g : fold_siblings(own)) {
        std::string value = token_path(g.glob, t.project_root);
        if (std::string why = prefer_ignore_for(g.glob); !why.empty()) {
            preferred.push_back({kind.name, kind.declare, {value}, {value}, g.files.size(), std::move(why), {}});
            continue;
        }
        // A file held only by effect must be declared to be read: ignoring it would hide what it changes.
        if (!held_by_effect(g.glob, t.project_root))
            plain.or_ignore.push_back(value);
        plain.values.push_back(std::move(value));
        plain.paths += g.files.size();
    }
    if (!plain.values.empty()) {
        sort_unique(plain.values);
        sort_unique(plain.or_ignore);
        out.push_back(std::move(plain));
    }
    out.insert(out.end(), preferred.begin(), preferred.end());
}

// Files read in the projects it depends on: keyed by a `^` input (default is every file of a project),
// or left out by `^` ignoreReads globs matched from each of their roots, by top-level entry.
void dependency_suggestion(std::vector<Suggestion>& out, const FindingKind& kind, const TaskAudit& t)
{
    std::vector<std::string> globs;
    std::size_t files = 0;
    for (const auto& [project, paths] : t.findings.dependency_reads) {
        files += paths.size();
        auto root = t.dependency_roots.find(project);
        for (const std::string& p : paths) {
            std::string rel = p;
            if (root != t.dependency_roots.end())
                if (auto rest = in_project(p, root->second))
                    rel = *rest;
            auto slash = rel.find('/');
            globs.push_back("^" + (slash == std::string::npos ? rel : rel.substr(0, slash) + "/**"));
        }
    }
    if (globs.empty())
        return;
    sort_unique(globs);
    out.push_back({kind.name, kind.declare, {"^default"}, std::move(globs), files, {}, {}});
}

// Under Landlock alone (SuggestAs::file_outputs): a declared file output refused did not exist yet, and
// Landlock cannot let a task create a file that is not there: its directory, declared as the output
// instead, is made as the task starts. The others as writes.
void file_output_suggestions(std::vector<Suggestion>& out, const FindingKind& kind, const TaskAudit& t)
{
    Suggestion directories{kind.name, kind.declare, {}, {}, 0, {}, {}};
    std::vector<std::string> refused;
    for (const std::string& p : t.findings.*kind.list) {
        // qk's cache is read-only to every task whatever it declares: no output can allow it.
        // Nor a link that points away: declaring it changes nothing.
        if (output_itself(t, p) || special_tree(p) == SpecialDir::qk || t.refused_links.contains(p))
            continue;
        if (std::find(t.file_outputs.begin(), t.file_outputs.end(), p) == t.file_outputs.end()) {
            if (!temporary_name(p))
                refused.push_back(token_path(p, t.project_root));
            continue;
        }
        std::string dir(parent_of(p));
        directories.values.push_back(dir.empty() ? "{workspaceRoot}" : token_path(dir, t.project_root));
        directories.in_place_of.push_back(token_path(p, t.project_root));
        ++directories.paths;
    }
    if (!directories.values.empty()) {
        sort_unique(directories.values);
        sort_unique(directories.in_place_of);
        out.push_back(std::move(directories));
    }
    add(out, kind, std::move(refused));
}

// Writes outside its outputs as outputs (SuggestAs::writes): a directory it created there whole.
std::vector<std::string> write_values(const TaskFindings& f, const std::vector<std::string>& paths,
                                      const std::string& project_root)
{
    std::vector<std::string> outputs;
    for (const std::string& p : paths) {
        const std::string* d = created_holder(f, p);
        if (!temporary_name(d ? *d : p))
            outputs.push_back(token_path(d ? *d : p, project_root));
    }
    return outputs;
}

// `paths` less those in a project it depends on that it read more of: keyed by the `^default` suggested
// for those (SuggestAs::reads_not_in_dependencies).
std::vector<std::string> not_in_dependencies(const std::vector<std::string>& paths, const TaskAudit& t)
{
    std::vector<std::string> out;
    for (const std::string& p : paths)
        if (std::none_of(t.dependency_roots.begin(), t.dependency_roots.end(),
                         [&p](const auto& root) { return in_project(p, root.second).has_value(); }))
            out.push_back(p);
    return out;
}

// What a task wrote outside its outputs, as a run of `run`'s kind lists it (the lists of its kinds
// suggested as outputs, and the directories it created there): a read of one is a read of its own output,
// and the output suggested for the write covers it.
std::set<std::string, std::less<>> written_outside(const TaskFindings& f, KindRun run)
{
    std::set<std::string, std::less<>> written(f.created_directories.begin(), f.created_directories.end());
    for (const FindingKind& k : finding_kinds())
        if (k.run == run && (k.suggest == SuggestAs::writes || k.suggest == SuggestAs::file_outputs))
            written.insert((f.*k.list).begin(), (f.*k.list).end());
    return written;
}

// `kind`'s suggestion, as its row says. `run` only for the audit's kinds: what it declares once for many
// tasks is what audited tasks read.
void suggest_kind(std::vector<Suggestion>& out, const FindingKind& kind, const TaskAudit& t,
                  const std::set<std::string, std::less<>>& written, const RunAudit* run)
{
    const TaskFindings& f = t.findings;
    const RunAudit* shared = kind.run == KindRun::audit ? run : nullptr;
    switch (kind.suggest) {
    case SuggestAs::reads: read_suggestions(out, kind, f.*kind.list, t, written, shared); return;
    case SuggestAs::reads_not_in_dependencies:
        read_suggestions(out, kind, not_in_dependencies(f.*kind.list, t), t, written, shared);
        return;
    case SuggestAs::file_outputs: file_output_suggestions(out, kind, t); return;
    case SuggestAs::writes: add(out, kind, write_values(f, f.*kind.list, t.project_root)); return;
    case SuggestAs::dependencies: dependency_suggestion(out, kind, t); return;
    case SuggestAs::listed: add(out, kind, f.*kind.list); return;
    case SuggestAs::none: return;
    }
}

// A JSON array to paste, each value escaped as a JSON string (printable_json): a name with terminal
// escapes in it is shown as "\u001b...", never played.
std::string quoted_list(const std::vector<std::string>& values, std::size_t shown)
{
    std::string out = "[";
    for (std::size_t i = 0; i < values.size() && i < shown; ++i)
        out += fmt::format("{}\"{}\"", i ? ", " : "", printable_json(values[i]));
    if (values.size() > shown)
        out += fmt::format(", … {} more", values.size() - shown);
    return out + "]";
}

// The target of "project:target": targetDefaults are keyed by it.
std::string target_of(const std::string& task)
{
    auto colon = task.find(':');
    return colon == std::string::npos ? task : task.substr(colon + 1);
}

}  // namespace

bool output_itself(const TaskAudit& t, std::string_view path)
{
    if (std::find(t.file_outputs.begin(), t.file_outputs.end(), path) != t.file_outputs.end())
        return false;
    for (const std::string& o : t.output_paths)
        if (is_within(o, path))
            return true;
    return false;
}

std::vector<std::string> group_created(const TaskFindings& f)
{
    std::vector<std::string> out;
    for (const std::string& p : f.stray_writes) {
        const std::string* d = created_holder(f, p);
        out.push_back(d ? *d + "/" : p);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<Suggestion> suggest(const TaskAudit& t, const RunAudit* run)
{
    // By run, then in SuggestAs' order (what to read before what to write), then in the table's.
    std::vector<const FindingKind*> kinds;
    for (const FindingKind& k : finding_kinds())
        kinds.push_back(&k);
    std::stable_sort(kinds.begin(), kinds.end(), [](const FindingKind* a, const FindingKind* b) {
        return std::pair(a->run, a->suggest) < std::pair(b->run, b->suggest);
    });
    const std::set<std::string, std::less<>> written[] = {written_outside(t.findings, KindRun::audit),
                                                          written_outside(t.findings, KindRun::enforce)};
    std::vector<Suggestion> out;
    for (const FindingKind* k : kinds)
        suggest_kind(out, *k, t, written[k->run == KindRun::audit ? 0 : 1], run);
    return out;
}

std::vector<SharedSuggestion> suggest_shared(const RunAudit& run)
{
    // Globs for which ignoreReads likely fits better, one suggestion per reason (every workspace
    // package's package.json, in packages/* and examples/*/*, is one change); the rest sharedGlobals.
    struct Gathered {
        SharedSuggestion suggestion;
        std::set<std::string> tasks, targets;
        void take(const SharedRead& r, std::string value)
        {
            suggestion.values.push_back(std::move(value));
            tasks.insert(r.task_ids.begin(), r.task_ids.end());
            for (const std::string& t : r.task_ids)
                targets.insert(target_of(t));
        }
        SharedSuggestion done() &&
        {
            suggestion.targets.assign(targets.begin(), targets.end());
            suggestion.tasks = tasks.size();
            return std::move(suggestion);
        }
    };
    Gathered globals;
    std::map<std::string, Gathered> preferred;  // by the reason ignoreReads fits better
    for (const SharedRead& r : run.shared_reads) {
        std::string value = "{workspaceRoot}/" + r.path;
        if (std::string why = prefer_ignore_for(r.path); !why.empty()) {
            Gathered& g = preferred[why];
            g.suggestion.prefer_ignore = why;
            g.suggestion.or_ignore.push_back(value);
            g.take(r, std::move(value));
            continue;
        }
        if (!held_by_effect(r.path, ""))
            globals.suggestion.or_ignore.push_back(value);
        globals.take(r, std::move(value));
    }
    std::vector<SharedSuggestion> out;
    if (!globals.suggestion.values.empty())
        out.push_back(std::move(globals).done());
    for (auto& [why, g] : preferred)
        out.push_back(std::move(g).done());
    return out;
}

std::string suggestion_line(const Suggestion& s, std::size_t shown)
{
    std::string out;
    if (s.declare == "externalDependencies")
        out = fmt::format("\"inputs\": [{{\"externalDependencies\": {}}}]", quoted_list(s.values, shown));
    else if (s.declare == "network")
        out = fmt::format("\"qk:sandbox\": {{\"network\": {}}} (added to its list)", quoted_list(s.values, shown));
    else if (s.declare == "packageExtensions")
        out = fmt::format("pnpm's \"packageExtensions\": {} as a dependency of the package importing it",
                          quoted_list(s.values, shown));
    else
        out = fmt::format("\"{}\": {}", s.declare, quoted_list(s.values, shown));
    if (!s.in_place_of.empty())
        out += fmt::format(" in place of {}", quoted_list(s.in_place_of, shown));
    const char* it = std::max(s.paths, s.or_ignore.size()) == 1 ? "it" : "they";
    if (!s.prefer_ignore.empty())
        out += fmt::format(", or, likely better, in qk:ultracache.ignoreReads: {}",
                           printable(s.prefer_ignore));  // it names the file
    else if (s.or_ignore == s.values)
        out += fmt::format(", or in qk:ultracache.ignoreReads if {} cannot change the result", it);
    else if (!s.or_ignore.empty())
        out += fmt::format(", or {} in qk:ultracache.ignoreReads if {} cannot change the result",
                           quoted_list(s.or_ignore, shown), it);
    return out;
}

}  // namespace qk::audit
