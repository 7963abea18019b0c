#include "qk/key/session.hpp"

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

Status Session::plan(const workspace::TaskRequest& request)
{
    QK_TRY(tasks, workspace::TaskGraph::build(*graph_, request));
    tasks_ = std::make_unique<workspace::TaskGraph>(std::move(*tasks));
    QK_TRY(keys, KeyBuilder::create(*graph_, *tasks_, *files_));
    keys_ = std::make_unique<KeyBuilder>(std::move(*keys));
    return {};
}

}  // namespace qk::key
