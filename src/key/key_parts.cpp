// The per-task parts of a key: how the task runs, the files held whole whatever the inputs say, the
// files held by effect, JSON field selections, dependency tasks' outputs, and the final hash.
#include "key_parts.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "qk/key/output_files.hpp"

namespace qk::key {

using workspace::Json;

Hash128 command_hash(const workspace::Task& task, const workspace::Project& project)
{
    const workspace::RunSpec& run = task.target->run;
    Hasher h;
    h.field(task.id).field(task.configuration).field(task.target->executor).field(std::uint64_t(run.kind));
    h.field(std::uint64_t(run.commands.size()));
    for (const std::string& c : run.commands)
        h.field(c);
    h.field(std::uint64_t(run.parallel)).field(run.cwd).field(run.env_file).field(run.script);
    for (const std::string& p : run.path_prepend)
        h.field(p);
    for (const auto& [k, v] : run.env)
        h.field(k).field(v);
    for (const std::string& e : run.lifecycle_events)
        h.field(e);
    h.field(project.package_name).field(project.package_version);  // npm_package_* in scripts
    return h.digest();
}

Status always_files(KeyBuilder::State& s, const workspace::Project& project, std::vector<KeyFile>& out)
{
    // Nx's ALWAYS_ON_FILES less nx.json (held by effect), plus the project's package.json, which the
    // spec lets every task read.
    std::vector<std::string> paths = {".gitignore", ".nxignore"};
    if (!project.package_json.empty())
        paths.push_back(project.package_json);
    std::sort(paths.begin(), paths.end());
    for (const std::string& p : paths) {
        auto i = s.files.find(p);
        if (!i)
            continue;
        std::uint32_t f = static_cast<std::uint32_t>(*i);
        QK_TRY_STATUS(s.files.hash(std::span(&f, 1)));
        out.push_back({p, s.files.hash_of(f)});
    }
    return {};
}

Status effect_files(KeyBuilder::State& s, const workspace::Task& task, TaskKey& key)
{
    const workspace::Workspace& ws = s.graph.workspace();
    const workspace::Project& project = ws.projects()[task.project];
    // What nx.json, the project's configuration files and the target defaults resolve to for this task.
    Json named = ws.named_inputs_for(project);
    Hash128 config = Hasher()
                         .field(task.target->raw.canonical())
                         .field(named.canonical())
                         .field(project.name)
                         .field(project.root)
                         .digest();
    const auto& f = ws.files();
    auto add = [&](const std::string& path, const char* what, Hash128 h) {
        if (!path.empty())
            key.effect_files.push_back({path, what, h});
    };
    const char* nx_what = "targetDefaults and namedInputs, as they resolve for this task";
    add(f.nx_json, nx_what, config);
    add(f.nx_extends, nx_what, config);
    add(f.nx_local_json, nx_what, config);
    add(project.project_json, "the project's name and root, its namedInputs and this target's configuration", config);
    add(project.project_local_json, "the project's name and root, its namedInputs and this target's configuration",
        config);
    // The project graph as it reaches this task: its project's dependencies, by name and root, composed
    // from each dependency's own as `^` inputs are (the work follows the direct dependencies).
    QK_TRY(graph_hash, s.dependency_digest(task.project, std::string(kGraphInput)));
    add(f.pnpm_workspace_yaml, "which projects exist: the task's project's dependencies, by name and root",
        *graph_hash);
    if (project.root != ".")
        add(f.root_package_json, "which projects exist: the task's project's dependencies, by name and root",
            *graph_hash);
    if (!key.packages.lockfile.empty())
        add(key.packages.lockfile, "the installed packages the key counts", key.packages.hash);
    return {};
}

std::string select_json_fields(const Json& doc, const std::vector<std::string>& fields,
                               const std::vector<std::string>& exclude_fields)
{
    auto split = [](std::string_view dotted) {
        std::vector<std::string> parts;
        for (std::size_t at; (at = dotted.find('.')) != std::string_view::npos; dotted.remove_prefix(at + 1))
            parts.emplace_back(dotted.substr(0, at));
        parts.emplace_back(dotted);
        return parts;
    };
    Json selected;
    if (fields.empty()) {
        selected = doc;
    } else {
        selected = Json::object();
        for (const std::string& field : fields) {
            auto parts = split(field);
            const Json* from = &doc;
            Json* to = &selected;
            for (std::size_t i = 0; from && i < parts.size(); ++i) {
                from = from->is_object() ? from->find(parts[i]) : nullptr;
                if (!from)
                    break;
                if (i + 1 == parts.size()) {
                    to->set(parts[i], *from);
                } else {
                    if (!to->find(parts[i]) || !to->find(parts[i])->is_object())
                        to->set(parts[i], Json::object());
                    to = to->find(parts[i]);
                }
            }
        }
    }
    for (const std::string& field : exclude_fields) {
        auto parts = split(field);
        Json* at = &selected;
        for (std::size_t i = 0; at && i + 1 < parts.size(); ++i)
            at = at->is_object() ? at->find(parts[i]) : nullptr;
        if (at && at->is_object())
            at->erase(parts.back());
    }
    return selected.canonical();
}

namespace {

// Where a json input that is a symbolic link leads, through a chain of links: the regular file it
// resolves to, or "" (not a link, dangling, or no regular file at the end).
std::string link_target(const std::filesystem::path& path)
{
    std::error_code ec;
    if (!std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec)))
        return {};
    std::filesystem::path target = std::filesystem::canonical(path, ec);
    if (ec || !std::filesystem::is_regular_file(target, ec))
        return {};
    return target.string();
}

}  // namespace

Result<std::vector<KeyJsonFile>> json_files(KeyBuilder::State& s, const JsonInput& in)
{
    std::vector<std::string> paths;
    auto glob = workspace::Glob::compile_fileset(in.pattern);
    if (!glob)
        return error(fmt::format("json input {}: {}", in.pattern, glob.error().message));
    auto [begin, end] = s.files.range_under(glob->literal_prefix());
    for (std::size_t f = begin; f < end; ++f)
        if (glob->matches(s.files.files()[f]))
            paths.push_back(s.files.files()[f]);
    std::vector<KeyJsonFile> out;
    for (const std::string& p : paths) {
        auto doc = workspace::read_json_file(s.graph.workspace().root() / p, p);
        KeyJsonFile part{p, in.fields, in.exclude_fields, {}};
        if (doc) {
            part.hash = Hasher().field("json").field(select_json_fields(*doc, in.fields, in.exclude_fields)).digest();
        } else {
            // Nx hashes a file that is not JSON whole.
            QK_TRY(h, hash_file(s.graph.workspace().root() / p));
            part.hash = Hasher().field("raw").field(*h).digest();
        }
        part.target = link_target(s.graph.workspace().root() / p);
        out.push_back(std::move(part));
    }
    return out;
}

Status dependency_outputs(KeyBuilder::State& s, std::size_t task, TaskKey& key)
{
    const workspace::TaskGraph& tasks = s.tasks;
    for (const DependentOutputsInput& in : key.inputs.dependent_outputs) {
        auto glob = workspace::Glob::compile(in.glob);
        if (!glob)
            return error(fmt::format("dependentTasksOutputFiles {}: {}", in.glob, glob.error().message));
        std::vector<std::size_t> deps = in.transitive ? tasks.transitive_deps(task) : tasks.tasks()[task].deps;
        for (std::size_t d : deps) {
            std::shared_ptr<const TaskKey> dk;
            {
                std::lock_guard l(s.mutex);
                dk = s.keys[d];
            }
            if (!dk)
                continue;
            QK_TRY(found, collect_output_files(s.graph.workspace().root(), dk->outputs.paths));
            for (const OutputFile& f : *found) {
                if (f.kind == OutputFile::Kind::directory || !glob->matches(f.path))
                    continue;
                QK_TRY(h, hash_file(s.graph.workspace().root() / f.path));
                key.dependency_outputs.push_back({f.path, *h});
            }
        }
    }
    std::sort(key.dependency_outputs.begin(), key.dependency_outputs.end(),
              [](const KeyFile& a, const KeyFile& b) { return a.path < b.path; });
    key.dependency_outputs.erase(std::unique(key.dependency_outputs.begin(), key.dependency_outputs.end(),
                                             [](const KeyFile& a, const KeyFile& b) { return a.path == b.path; }),
                                 key.dependency_outputs.end());
    return {};
}

Result<Hash128> KeyBuilder::State::part_digest(std::size_t project, const std::string& input)
{
    if (input == kGraphInput) {
        const workspace::Project& p = graph.workspace().projects()[project];
        return Hasher().field(p.name).field(p.root).digest();
    }
    auto part = inputs.dependency_part(graph, project, input);
    if (part->error)
        return error(*part->error);
    Hasher h;
    h.field("qk part").field(std::uint64_t{part->groups.size()});
    for (const auto& g : part->groups) {
        QK_TRY(r, group(g));
        h.field(r->hash);
        h.field(std::uint64_t{r->trees ? r->trees->size() : 0});
        if (r->trees)
            for (const LinkedTreeRef& t : *r->trees)
                h.field(t.tree->link).field(t.tree->hash);
    }
    for (const JsonInput& in : part->json) {
        QK_TRY(files, json_files(*this, in));
        for (const KeyJsonFile& f : *files)
            h.field(f.path).field(f.hash);
    }
    for (const std::string& name : part->env) {
        const char* v = std::getenv(name.c_str());
        h.field(name).field(v ? Hasher().field("set").field(v).digest() : Hasher().field("unset").digest());
    }
    for (const std::string& cmd : part->runtime) {
        QK_TRY(out, runtime(cmd));
        h.field(cmd).field(*out);
    }
    return h.digest();
}

Hash128 final_hash(const TaskKey& key)
{
    Hasher h;
    h.field("qk-key-v1").field(key.command_hash);
    h.field(std::uint64_t(key.groups.size()));
    for (const KeyGroup& g : key.groups)
        h.field(g.hash);
    for (const KeyFile& f : key.always)
        h.field(f.path).field(f.hash);
    for (const KeyEffectFile& f : key.effect_files)
        h.field(f.path).field(f.hash);
    for (const KeyJsonFile& f : key.json_files)
        h.field(f.path).field(f.hash);
    for (const auto& [name, v] : key.env)
        h.field(name).field(v);
    for (const auto& [cmd, v] : key.runtime)
        h.field(cmd).field(v);
    h.field(std::uint64_t(key.packages.source)).field(key.packages.hash);
    for (const auto& [id, v] : key.dependency_tasks)
        h.field(id).field(v);
    for (const KeyFile& f : key.dependency_outputs)
        h.field(f.path).field(f.hash);
    for (const std::string& o : key.outputs.paths)
        h.field(o);
    // Last, and only when there are some, so that a key without them is what it was before trees
    // were keyed.
    if (!key.linked_trees.empty()) {
        h.field("qk:linked-trees").field(std::uint64_t(key.linked_trees.size()));
        for (const auto& t : key.linked_trees)
            h.field(t->link).field(t->hash);
    }
    if (!key.dependency_inputs.empty()) {
        h.field("qk:dependency-inputs").field(std::uint64_t(key.dependency_inputs.size()));
        for (const auto& [input, digest] : key.dependency_inputs)
            h.field(input).field(digest);
    }
    return h.digest();
}

}  // namespace qk::key
