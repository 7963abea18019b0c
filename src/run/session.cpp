#include "qk/run/session.hpp"

namespace qk::run {

Result<std::unique_ptr<Session>> Session::open(const std::filesystem::path& start)
{
    auto ws = workspace::Workspace::discover(start);
    if (!ws)
        return ws.error();
    auto s = std::unique_ptr<Session>(new Session());
    s->ws_ = std::make_unique<workspace::Workspace>(std::move(*ws));
    auto graph = workspace::ProjectGraph::build(*s->ws_);
    if (!graph)
        return graph.error();
    s->graph_ = std::make_unique<workspace::ProjectGraph>(std::move(*graph));
    return s;
}

Status Session::plan(const workspace::TaskRequest& request)
{
    auto tasks = workspace::TaskGraph::build(*graph_, request);
    if (!tasks)
        return tasks.error();
    tasks_ = std::make_unique<workspace::TaskGraph>(std::move(*tasks));
    auto files = key::FileIndex::scan(*ws_);
    if (!files)
        return files.error();
    files_ = std::make_unique<key::FileIndex>(std::move(*files));
    auto keys = key::KeyBuilder::create(*graph_, *tasks_, *files_);
    if (!keys)
        return keys.error();
    keys_ = std::make_unique<key::KeyBuilder>(std::move(*keys));
    return {};
}

}  // namespace qk::run
