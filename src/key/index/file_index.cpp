// FileIndex: the scan's entry point and the lookups over its sorted file list.
#include "qk/key/file_index.hpp"

#include <fcntl.h>

#include <algorithm>
#include <system_error>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "file_index_hashing.hpp"
#include "qk/key/cache.hpp"
#include "qk/util/path_within.hpp"

namespace qk::key {

FileIndex::FileIndex() = default;
FileIndex::FileIndex(FileIndex&&) noexcept = default;
FileIndex& FileIndex::operator=(FileIndex&&) noexcept = default;
FileIndex::~FileIndex() = default;

Result<FileIndex> FileIndex::scan(const workspace::Workspace& ws)
{
    QK_TRY(index, scan_tree(ws.root()));
    index->assign_owners(ws);
    return index;
}

Result<FileIndex> FileIndex::scan_tree(const std::filesystem::path& root)
{
    FileIndex index;
    index.root_ = root;
    UniqueFd root_fd(::open(index.root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd.valid())
        return sys_error(fmt::format("cannot read the workspace root {}; check that it exists and that qk may read it",
                                     index.root_.string()));
    // The hash cache is read (and checked) on another thread while this one walks the tree.
    HashCacheFile cache;
    std::thread reader;
    try {
        reader = std::thread([&] { cache = read_hash_cache(hash_cache_path(index.root_)); });
    } catch (const std::system_error&) {
        cache = read_hash_cache(hash_cache_path(index.root_));
    }
    Status walked = index.walk(root_fd.get());
    if (reader.joinable())
        reader.join();
    if (!walked)
        return walked.error();
    index.owner_.assign(index.files_.size(), -1);
    index.hashing_ = std::make_unique<Hashing>(index.files_.size(), std::move(root_fd));
    index.hashing_->adopt(cache, index.files_);
    return index;
}

void FileIndex::assign_owners(const workspace::Workspace& ws)
{
    // The same answer as Workspace::project_owning: for "." the last such project, for any other root
    // the first (by index); the deepest root holding a file wins.
    std::unordered_map<std::string_view, std::int32_t> roots;
    std::int32_t root_owner = -1;
    const auto& projects = ws.projects();
    for (std::size_t i = 0; i < projects.size(); ++i) {
        const std::string& r = projects[i].root;
        if (r == ".")
            root_owner = static_cast<std::int32_t>(i);
        else if (!r.empty())
            roots.emplace(std::string_view(r), static_cast<std::int32_t>(i));
    }
    owner_.assign(files_.size(), root_owner);
    project_files_.assign(projects.size(), {});
    for (std::size_t i = 0; i < files_.size(); ++i) {
        std::string_view dir = files_[i];
        for (auto slash = dir.rfind('/'); slash != std::string_view::npos; slash = dir.rfind('/')) {
            dir = dir.substr(0, slash);
            if (auto it = roots.find(dir); it != roots.end()) {
                owner_[i] = it->second;
                break;
            }
        }
        if (owner_[i] >= 0)
            project_files_[static_cast<std::size_t>(owner_[i])].push_back(static_cast<std::uint32_t>(i));
    }
}

std::filesystem::path FileIndex::hash_cache_path(const std::filesystem::path& root)
{
    return LocalCache::directory(root) / "file-hashes";
}

std::optional<std::size_t> FileIndex::find(std::string_view path) const
{
    auto it = std::lower_bound(files_.begin(), files_.end(), path,
                               [](const std::string& f, std::string_view p) { return std::string_view(f) < p; });
    if (it == files_.end() || *it != path)
        return std::nullopt;
    return static_cast<std::size_t>(it - files_.begin());
}

std::optional<std::size_t> FileIndex::owner(std::size_t file) const
{
    if (file >= owner_.size() || owner_[file] < 0)
        return std::nullopt;
    return static_cast<std::size_t>(owner_[file]);
}

std::span<const std::uint32_t> FileIndex::files_of(std::size_t project) const
{
    if (project >= project_files_.size())
        return {};
    return project_files_[project];
}

std::pair<std::size_t, std::size_t> FileIndex::range_under(std::string_view prefix) const
{
    while (!prefix.empty() && prefix.back() == '/')
        prefix.remove_suffix(1);
    if (prefix.empty() || prefix == ".")
        return {0, files_.size()};
    if (auto exact = find(prefix))
        return {*exact, *exact + 1};  // a file: nothing can be under it
    // Paths under "p/" sort together, from "p/" up to (not including) "p0" ('0' follows '/').
    auto below = [](const std::string& f, std::string_view p) { return std::string_view(f) < p; };
    std::string key(prefix);
    key += '/';
    auto first = std::lower_bound(files_.begin(), files_.end(), std::string_view(key), below);
    key.back() = '/' + 1;
    auto last = std::lower_bound(first, files_.end(), std::string_view(key), below);
    return {static_cast<std::size_t>(first - files_.begin()), static_cast<std::size_t>(last - files_.begin())};
}

bool FileIndex::holds_special(std::string_view dir) const
{
    while (!dir.empty() && dir.back() == '/')
        dir.remove_suffix(1);
    if (dir.empty() || dir == ".")
        return !specials_.empty();
    // Paths strictly under "d" start with "d/" and sort from "d/" on: the first one at or after it decides.
    std::string key(dir);
    key += '/';
    auto it = std::lower_bound(specials_.begin(), specials_.end(), std::string_view(key),
                               [](const std::string& s, std::string_view k) { return std::string_view(s) < k; });
    return it != specials_.end() && is_under(*it, dir);
}

}  // namespace qk::key
