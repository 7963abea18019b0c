// Rules::build: a task's declarations and key compiled into Rules::Data. Everything here comes from
// configuration and the key, never from what the task did (docs/architecture.md: rules are built
// from declarations and the key).

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/core.h>

#include "path_kinds.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/special_names.hpp"
#include "qk/workspace/tokens.hpp"
#include "rules_data.hpp"

namespace qk::rules {
namespace {

// A warm path or ignoreReads glob with Nx's tokens resolved; one without a token is workspace-relative,
// as outputs are.
Result<std::string> resolve_tokens(std::string_view pattern, const workspace::Project& project, const std::string& where)
{
    auto r = workspace::resolve_tokens(pattern, project);
    if (!r)
        return error(fmt::format("{}: \"{}\": {}", where, pattern, r.error().message));
    auto path = workspace::relative_path(r->text);
    if (!path || path->empty())
        return error(fmt::format("{}: \"{}\" must name paths inside the workspace, as \"{{projectRoot}}/src/**\"",
                                 where, pattern));
    return r->negated ? "!" + *path : *path;
}

Result<PatternSet> compile_patterns(std::vector<std::string> patterns, bool fileset, const std::string& where)
{
    PatternSet set;
    auto compiled = fileset ? workspace::GlobSet::compile_fileset(patterns) : workspace::GlobSet::compile(patterns);
    if (!compiled)
        return error(fmt::format("{}: {}", where, compiled.error().message));
    set.set = std::move(compiled).value();
    set.any_positive = std::any_of(patterns.begin(), patterns.end(), [](const std::string& p) { return !p.starts_with('!'); });
    set.patterns = std::move(patterns);
    return set;
}

// Every strict ancestor directory of `path` ("a/b/c" gives "a/b" and "a").
void add_ancestors(std::string_view path, PathSet& into)
{
    for (std::string_view dir = dirname_of(path); !dir.empty(); dir = dirname_of(dir))
        into.emplace(dir);
}

// Which installed packages the task may read unreported: what its key counts, what the keys of the
// tasks it depends on count (its key folds theirs), and what the nested workspaces its globs cover
// install. Nothing is reported without an install, without a lockfile in the key, or when an input
// selects the lockfile whole.
void add_installed_packages(Rules::Data& d, const TaskDeclarations& task)
{
    const key::KeyPackages& kp = d.key->packages;
    if (!task.installed || kp.source == key::KeyPackages::Source::none || !kp.closure ||
        d.in_input_group(kp.lockfile))
        return;
    const workspace::PnpmLock& lock = task.installed->lock();
    d.installed = task.installed;
    d.names_packages = kp.source == key::KeyPackages::Source::named;
    d.keyed_packages.assign(lock.snapshots.size(), false);
    auto add = [&](const workspace::PnpmClosure& c) {
        for (std::size_t i = 0; i < c.member.size() && i < d.keyed_packages.size(); ++i)
            if (c.member[i])
                d.keyed_packages[i] = true;
    };
    add(*kp.closure);
    for (const auto& c : task.dependency_packages)
        if (c)
            add(*c);

    // A glob covering a nested workspace (an importer of the lockfile other than the root and those the
    // key counts) covers what it installs, and the workspace projects it links to.
    for (const auto& [path, importer] : lock.importers) {
        if (path == "." || std::find(kp.importers.begin(), kp.importers.end(), path) != kp.importers.end())
            continue;
        std::string manifest = path + "/package.json";
        bool covered = d.ignore_reads.matches(manifest);
        for (const auto& group : d.key->inputs.filesets)
            covered = covered || group->globs.matches(manifest);
        if (covered)
            d.covered_importers.push_back(path);
    }
    if (d.covered_importers.empty())
        return;
    workspace::PnpmClosureOptions options;
    options.follow_links = true;
    auto closure = workspace::importer_closure(lock, d.covered_importers, options);
    if (!closure)
        return;  // cannot happen: the importers come from the lockfile itself
    add(*closure);
    // Their manifests (and the projects' they link to), which tools resolving those packages read.
    for (const std::string& dir : d.covered_importers)
        d.covered_manifests.insert(dir + "/package.json");
    for (const std::string& dir : closure->links)
        d.covered_manifests.insert(dir + "/package.json");
}

}  // namespace

Result<Rules> Rules::build(const TaskDeclarations& task)
{
    const workspace::Workspace& ws = *task.workspace;
    const workspace::Project& project = ws.projects().at(task.project);
    const key::TaskKey& key = *task.key;
    auto d = std::make_shared<Data>();
    std::error_code ec;
    std::filesystem::path root = std::filesystem::canonical(ws.root(), ec);
    d->root = (ec ? ws.root() : root).string();
    while (d->root.size() > 1 && d->root.back() == '/')
        d->root.pop_back();
    d->ws = &ws;
    d->files = task.files;
    d->key = task.key;
    d->project = task.project;
    d->scratch = task.scratch;
    if (task.target)
        d->network = task.target->sandbox.network;
    std::string where = key.task;

    auto outputs = key::OutputSet::compile(key.outputs.paths);
    if (!outputs)
        return error(fmt::format("{}: its outputs: {}", where, outputs.error().message));
    d->outputs = std::move(outputs).value();
    for (const auto& r : d->outputs->roots()) {
        add_ancestors(r.path, d->output_directories);
        if (!r.whole && !r.path.empty())
            d->output_directories.insert(r.path);  // the literal directory of a glob: outputs lie in it
    }

    if (task.target && !task.target->warm.empty()) {
        std::vector<std::string> warm;
        for (const std::string& w : task.target->warm) {
            QK_TRY(resolved, resolve_tokens(w, project, where + ": qk:warm"));
            warm.push_back(std::move(resolved).value());
        }
        auto set = key::OutputSet::compile(warm);
        if (!set)
            return error(fmt::format("{}: qk:warm: {}", where, set.error().message));
        d->warm = std::move(set).value();
    }

    if (task.target) {
        std::vector<std::string> plain, dependency;
        for (const std::string& g : task.target->ultracache_ignore_reads) {
            if (g.starts_with('^')) {
                dependency.push_back(g.substr(1));
                continue;
            }
            QK_TRY(resolved, resolve_tokens(g, project, where + ": qk:ultracache.ignoreReads"));
            plain.push_back(std::move(resolved).value());
        }
        QK_TRY(a, compile_patterns(std::move(plain), false, where + ": qk:ultracache.ignoreReads"));
        d->ignore_reads = std::move(a).value();
        QK_TRY(b, compile_patterns(std::move(dependency), false, where + ": qk:ultracache.ignoreReads"));
        d->ignore_dependency_reads = std::move(b).value();
    }

    for (const auto& f : key.always)
        d->always.insert(f.path);
    for (const auto& f : key.json_files) {
        d->json_files.insert(f.path);
        // A link's target: the fields keyed are read there (spec: "including its symlink target").
        // Outside the workspace everything is open; .git, .qk and node_modules are open for reading.
        auto rel = qk::relative_under(f.target, d->root);
        if (!f.target.empty() && rel && special_tree(*rel) == SpecialDir::none)
            d->json_targets.emplace(*rel);
    }
    for (const auto& f : key.dependency_outputs)
        d->dependency_output_files.insert(f.path);
    for (const auto& f : key.effect_files)
        d->effect_files.emplace(f.path, f.what);
    for (const DependencyOutputs& dep : task.dependency_outputs) {
        d->dependency_outputs.push_back(dep);
        for (const auto& root : dep.outputs->roots()) {
            auto& at = d->dependency_roots[root.path];
            if (at.empty() || at.back() != d->dependency_outputs.size() - 1)
                at.push_back(d->dependency_outputs.size() - 1);
        }
    }

    const auto& projects = ws.projects();
    d->dependency_project.assign(projects.size(), false);
    if (task.graph)
        for (std::size_t p : task.graph->transitive_dependencies(task.project))
            d->dependency_project[p] = true;
    add_installed_packages(*d, task);
    d->cover_inputs();

    Rules rules;
    rules.d_ = std::move(d);
    return rules;
}

}  // namespace qk::rules
