#include "qk/key/session.hpp"

#include <fmt/format.h>

namespace qk::key {

Result<std::unique_ptr<Session>> Session::open(const std::filesystem::path& start)
{
    // One walk of the tree: the file index lists the files, and projects are discovered among them.
    QK_TRY(root, workspace::Workspace::find_root(start));
    QK_TRY(files, FileIndex::scan_tree(*root));
    QK_TRY(ws, workspace::Workspace::load(*root, &files->files()));
    files->assign_owners(*ws);
    auto s = std::unique_ptr<Session>(new Session());
    s->ws_ = std::make_unique<workspace::Workspace>(std::move(*ws));
    s->files_ = std::make_unique<FileIndex>(std::move(*files));
    QK_TRY(graph, workspace::ProjectGraph::build(*s->ws_));
    s->graph_ = std::make_unique<workspace::ProjectGraph>(std::move(*graph));
    return s;
}

Result<std::shared_ptr<const OutputSet>> Session::compiled_outputs(std::size_t i)
{
    {
        std::lock_guard lock(outputs_mutex_);
        if (auto it = outputs_.find(i); it != outputs_.end())
            return it->second;
    }
    const TaskKey* key = keys_->computed(i);
    if (!key)
        return error(fmt::format("{}: its key has not been computed", tasks_->tasks()[i].id));
    // Compiled outside the lock: two threads asking at once compile twice and keep the first.
    QK_TRY(set, OutputSet::compile(key->outputs.paths));
    std::lock_guard lock(outputs_mutex_);
    return outputs_.try_emplace(i, std::make_shared<const OutputSet>(std::move(*set))).first->second;
}

Status Session::plan(const workspace::TaskRequest& request)
{
    QK_TRY(tasks, workspace::TaskGraph::build(*graph_, request));
    tasks_ = std::make_unique<workspace::TaskGraph>(std::move(*tasks));
    QK_TRY(keys, KeyBuilder::create(*graph_, *tasks_, *files_));
    keys_ = std::make_unique<KeyBuilder>(std::move(*keys));
    std::lock_guard lock(outputs_mutex_);
    outputs_.clear();  // task indices are the new graph's
    return {};
}

}  // namespace qk::key
