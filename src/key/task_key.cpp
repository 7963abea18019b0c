// The key of a task, part by part. What goes into the hash, and in which order, is spelled out in
// TaskKeyHash below; the rest gathers the parts. Caches shared by the tasks of a run (a project's
// fileset group, a package set, a runtime command's output) live in KeyBuilder::State.
#include "qk/key/task_key.hpp"

#include <algorithm>
#include <mutex>

#include <fmt/format.h>

#include "key_parts.hpp"
#include "qk/key/output_files.hpp"
#include "qk/key/warm_state.hpp"

namespace qk::key {

namespace fs = std::filesystem;

namespace {

// A group less the files under the task's own warm paths, hashed as State::group hashes a group: warm
// state is what the tool left, put back by the cache, and never part of the key (a tool rewriting its
// cache would otherwise move its own key on every run, and its result would never be stored). The
// group as it is when none of its files is warm state, so a task whose inputs miss its warm paths, and
// every task without any, shares the run's groups.
GroupResult without_warm(const GroupResult& group, const OutputSet& warm, const FileIndex& files)
{
    auto kept = std::make_shared<std::vector<std::uint32_t>>();
    for (std::uint32_t f : *group.files)
        if (!warm.contains(files.files()[f]))
            kept->push_back(f);
    if (kept->size() == group.files->size())
        return group;
    Hasher h;
    h.field(std::uint64_t(kept->size()));
    for (std::uint32_t f : *kept)
        h.field(files.files()[f]).field(files.hash_of(f));
    GroupResult out{std::move(kept), h.digest(), nullptr};
    if (group.trees) {
        std::vector<LinkedTreeRef> trees;
        for (const LinkedTreeRef& t : *group.trees)
            if (!warm.contains(files.files()[t.link]))
                trees.push_back(t);
        if (!trees.empty())
            out.trees = std::make_shared<const std::vector<LinkedTreeRef>>(std::move(trees));
    }
    return out;
}

// The files the key holds whole: each input group (less the task's own warm state), the files every
// task of the project holds, and what the links among them lead to.
Status held_files(KeyBuilder::State& s, const workspace::Task& task, const workspace::Project& project,
                  const workspace::Target& target, TaskKey& key)
{
    // Only a task with warm paths compiles them; a bad one is said where the cache would keep them.
    std::optional<OutputSet> warm;
    if (!target.warm.empty())
        if (auto paths = resolve_warm_paths(project, target); paths && !paths->empty())
            if (auto set = OutputSet::compile(*paths))
                warm = std::move(*set);
    std::vector<LinkedTreeRef> trees;  // what the links among the files held whole lead to
    for (std::size_t g = 0; g < key.inputs.filesets.size(); ++g) {
        auto group = s.group(key.inputs.filesets[g]);
        if (!group)
            return error(fmt::format("task {}: {}", task.id, group.error().message));
        if (warm)
            group = without_warm(*group, *warm, s.files);
        key.groups.push_back(KeyGroup{g, group->files, group->hash});
        if (group->trees)
            trees.insert(trees.end(), group->trees->begin(), group->trees->end());
    }
    if (auto st = always_files(s, project, key.always); !st)
        return error(fmt::format("task {}: {}", task.id, st.error().message));
    for (const KeyFile& f : key.always) {
        auto i = s.files.find(f.path);
        if (!i || !s.files.is_symlink(*i))
            continue;
        auto tree = s.linked_tree(static_cast<std::uint32_t>(*i));
        if (!tree)
            return error(fmt::format("task {}: {}", task.id, tree.error().message));
        if (*tree)
            trees.push_back({static_cast<std::uint32_t>(*i), std::move(*tree)});
    }
    linked_trees(std::move(trees), key);
    return {};
}

// The keys of the tasks it depends on, each computed before it (the scheduler's order).
Status dependency_tasks(KeyBuilder::State& s, const workspace::Task& task, TaskKey& key)
{
    {
        std::lock_guard lock(s.mutex);
        std::vector<std::size_t> deps = task.deps;
        deps.insert(deps.end(), task.continuous_deps.begin(), task.continuous_deps.end());
        for (std::size_t d : deps) {
            const TaskKey* dk = s.keys[d].get();
            if (!dk)
                return error(fmt::format("internal: the key of {} is needed before that of {}",
                                         s.tasks.tasks()[d].id, task.id));
            key.dependency_tasks.emplace_back(dk->task, dk->hash);
        }
    }
    std::sort(key.dependency_tasks.begin(), key.dependency_tasks.end());
    return {};
}

}  // namespace

Result<KeyBuilder> KeyBuilder::create(const workspace::ProjectGraph& graph, const workspace::TaskGraph& tasks,
                                      FileIndex& files)
{
    KeyBuilder b;
    b.s_ = std::make_shared<State>(graph, tasks, files);
    fs::path lock = graph.workspace().root() / "pnpm-lock.yaml";
    std::error_code ec;
    if (fs::exists(lock, ec)) {
        QK_TRY(parsed, workspace::parse_pnpm_lock(lock.string()));
        b.s_->lock = std::make_unique<workspace::PnpmLock>(std::move(*parsed));
        b.s_->lock_path = "pnpm-lock.yaml";
    }
    b.s_->keys.resize(tasks.tasks().size());
    State* state = b.s_.get();
    b.s_->digests = std::make_unique<DependencyDigests>(
        graph, [state](std::size_t project, const std::string& input) { return state->part_digest(project, input); });
    return b;
}

const TaskKey* KeyBuilder::computed(std::size_t i) const
{
    std::lock_guard lock(s_->mutex);
    return s_->keys[i].get();
}

std::shared_ptr<const TaskKey> KeyBuilder::shared(std::size_t i) const
{
    std::lock_guard lock(s_->mutex);
    return s_->keys[i];
}

const workspace::PnpmLock* KeyBuilder::lockfile() const
{
    return s_->lock.get();
}

Result<std::shared_ptr<const TaskKey>> KeyBuilder::key(std::size_t i)
{
    QK_TRY(built, build(i, Expansion::own));
    std::shared_ptr<const TaskKey> result = std::move(*built);
    std::lock_guard lock(s_->mutex);
    s_->keys[i] = result;
    return result;
}

Result<TaskKey> KeyBuilder::expanded(std::size_t i)
{
    std::shared_ptr<const TaskKey> stored = shared(i);
    if (!stored)
        return error(fmt::format("internal: the key of {} is needed before it was computed", s_->tasks.tasks()[i].id));
    if (stored->dependency_inputs.empty())
        return *stored;
    QK_TRY(built, build(i, Expansion::full));
    TaskKey out = std::move(**built);
    out.dependency_inputs = stored->dependency_inputs;
    out.hash = stored->hash;
    return out;
}

Result<std::shared_ptr<TaskKey>> KeyBuilder::build(std::size_t i, Expansion expansion)
{
    State& s = *s_;
    const workspace::Task& task = s.tasks.tasks()[i];
    const workspace::Workspace& ws = s.graph.workspace();
    const workspace::Project& project = ws.projects()[task.project];
    const workspace::Target& target = *task.target;

    auto owned = std::make_shared<TaskKey>();
    TaskKey& key = *owned;
    key.task = task.id;
    auto plan = plan_inputs(s.graph, task.project, target, &s.inputs, expansion);
    if (!plan) {
        // Where to fix it: the files the target comes from (its inputs may come from nx.json too).
        std::string files;
        for (const std::string& f : target.defined_in)
            files += (files.empty() ? "" : ", ") + f;
        if (!target.target_default_key.empty() || files.empty())
            files += (files.empty() ? "" : ", or ") + std::string("nx.json");
        return error(fmt::format("{} (the target is configured in {})", plan.error().message, files));
    }
    key.inputs = std::move(*plan);
    QK_TRY(outputs, resolve_outputs(project, target, task.configuration));
    key.outputs = std::move(*outputs);
    key.command_hash = command_hash(task, project);

    QK_TRY_STATUS(held_files(s, task, project, target, key));
    auto packages = s.packages(task, key.inputs);
    if (!packages)
        return error(fmt::format("task {}: {}", task.id, packages.error().message));
    key.packages = std::move(*packages);
    if (auto st = effect_files(s, task, key); !st)
        return error(fmt::format("task {}: {}", task.id, st.error().message));
    for (const JsonInput& in : key.inputs.json) {
        auto parts = json_files(s, in);
        if (!parts)
            return error(fmt::format("task {}: {}", task.id, parts.error().message));
        key.json_files.insert(key.json_files.end(), parts->begin(), parts->end());
    }
    for (const std::string& name : key.inputs.env) {
        const char* v = std::getenv(name.c_str());
        key.env.emplace_back(name, v ? Hasher().field("set").field(v).digest() : Hasher().field("unset").digest());
    }
    for (const std::string& cmd : key.inputs.runtime) {
        auto out = s.runtime(cmd);
        if (!out)
            return error(fmt::format("task {}: {}", task.id, out.error().message));
        key.runtime.emplace_back(cmd, *out);
    }
    QK_TRY_STATUS(dependency_tasks(s, task, key));
    if (auto st = dependency_outputs(s, i, key); !st)
        return error(fmt::format("task {}: {}", task.id, st.error().message));

    if (expansion == Expansion::own)
        for (const std::string& input : key.inputs.dependency_inputs) {
            auto digest = s.dependency_digest(task.project, input);
            if (!digest)
                return error(fmt::format("task {}: {}", task.id, digest.error().message));
            key.dependency_inputs.emplace_back(input, *digest);
        }

    key.hash = final_hash(key);
    return owned;
}

}  // namespace qk::key
