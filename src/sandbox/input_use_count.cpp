#include "input_use_count.hpp"

#include <algorithm>
#include <unordered_set>

#include "qk/key/cache.hpp"
#include "qk/key/input_use.hpp"

namespace qk::sandbox {

std::vector<std::string> declared_input_files(const key::TaskKey& key, const key::FileIndex& files)
{
    std::vector<std::string> out;
    for (const key::KeyGroup& g : key.groups)
        if (g.files)
            for (std::uint32_t f : *g.files)
                out.push_back(files.files()[f]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::string> never_read_so_far(key::Session& session, std::size_t i)
{
    std::shared_ptr<const key::TaskKey> key = session.keys().shared(i);
    if (!key)
        return {};
    auto store = key::InputUseStore::open(key::LocalCache::directory(session.workspace().root()));
    std::vector<std::string> listed =
        key::never_read(store.load(session.tasks().tasks()[i].id), session.workspace().nx().inputs_never_read_after_runs);
    if (listed.empty())
        return listed;  // the usual case: no list of the key's files to make
    // A file counted then and gone from the key since is no candidate now.
    const std::vector<std::string> declared = declared_input_files(*key, session.files());
    std::erase_if(listed, [&](const std::string& f) { return !std::binary_search(declared.begin(), declared.end(), f); });
    return listed;
}

Result<std::vector<std::string>> count_input_use(key::Session& session, std::size_t i,
                                                 const record::Recording& recording, const rules::Rules& rules)
{
    const workspace::Task& task = session.tasks().tasks()[i];
    std::shared_ptr<const key::TaskKey> key = session.keys().shared(i);
    if (!key)
        return error("its key was not computed");
    // Opened to read (or run), or looked for and not found: a file whose absence the task tested counts
    // as used. A path read through a link counts under both names.
    std::unordered_set<std::string_view> read;
    auto take = [&](std::string_view path) {
        if (auto rel = rules.relative(path); rel && !rel->empty())
            read.insert(*rel);
    };
    for (const auto& [path, access] : recording.paths())
        if (access & (record::kRead | record::kProbe))
            take(path);
    for (const auto& [spelled, canonical] : recording.aliases())
        if (auto it = recording.paths().find(canonical);
            it != recording.paths().end() && (it->second & (record::kRead | record::kProbe)))
            take(spelled);
    auto store = key::InputUseStore::open(key::LocalCache::directory(session.workspace().root()));
    QK_TRY(counts, store.add_run(task.id, declared_input_files(*key, session.files()),
                                 [&](std::string_view path) { return read.contains(path); }));
    return key::never_read(*counts, session.workspace().nx().inputs_never_read_after_runs);
}

}  // namespace qk::sandbox
