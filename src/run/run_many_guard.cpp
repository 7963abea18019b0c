// RunMany's guard before a result is stored under its key: did anything the key was computed from change
// while the task ran, even if it was put back before the task ended (issue 38)?
#include <algorithm>

#include "qk/run/run_many.hpp"
#include "qk/sandbox/sandbox.hpp"

namespace qk::run {
namespace {

std::string while_running(const key::FileIndex::Change& c)
{
    using Kind = key::FileIndex::Change::Kind;
    std::string what = c.path + (c.kind == Kind::removed ? " was removed while it ran" : " changed while it ran");
    if (c.kind == Kind::rewritten)
        what += " (its content is the same at the end, but it was written or put back meanwhile: its change time "
                "moved; declare it as an output if the task writes it itself)";
    return what + ": the result may hold what its key does not say; run again";
}

// Whether `path` (workspace-relative) is a file `key`'s groups or always-held files list.
bool held(const key::TaskKey& key, key::FileIndex& files, const std::string& path)
{
    auto index = files.find(path);
    if (!index)
        return false;
    const auto f = static_cast<std::uint32_t>(*index);
    for (const key::KeyGroup& g : key.groups)
        if (g.files && std::find(g.files->begin(), g.files->end(), f) != g.files->end())
            return true;
    return std::any_of(key.always.begin(), key.always.end(), [&](const key::KeyFile& k) { return k.path == path; });
}

}  // namespace

std::optional<std::string> RunMany::changed_while_running(std::size_t i, const key::TaskKey& key)
{
    key::FileIndex& files = session_->files();
    // Its `^` inputs are one digest per input in the key; the files behind them are the dependencies'
    // groups, which only the expanded key lists. A dependency's source edited while the task ran is as
    // much a change as its own.
    std::optional<key::TaskKey> expanded;
    if (!key.dependency_inputs.empty()) {
        auto full = session_->keys().expanded(i);
        if (!full)
            return "what its dependencies hold could not be checked again: " + full.error().message;
        expanded = std::move(*full);
    }
    const key::TaskKey& all = expanded ? *expanded : key;
    // A task may write over its own outputs where its inputs hold them too (a `dist` Git does not ignore,
    // rebuilt with the same bytes): those are judged by their content. Any other change counts, even one
    // put back before the task ended: the task may have read the file in between.
    auto outputs = session_->compiled_outputs(i);
    if (!outputs)
        return "its outputs could not be matched to check its inputs again: " + outputs.error().message;
    auto may_rewrite = [&](std::string_view path) { return (*outputs)->contains(path); };
    for (const key::KeyGroup& g : all.groups)
        if (g.files)
            if (auto changed = files.changed_since_hashed(*g.files, may_rewrite))
                return while_running(*changed);
    std::vector<std::uint32_t> named;  // the project's package.json, .gitignore: held whatever the inputs say
    for (const key::KeyFile& f : key.always)
        if (auto index = files.find(f.path))
            named.push_back(static_cast<std::uint32_t>(*index));
    if (auto changed = files.changed_since_hashed(named, may_rewrite))
        return while_running(*changed);
    // Over the overlay a task's writes outside its outputs land in its own view and are discarded as it
    // ends, so the workspace never shows them; but the task saw its inputs as it changed them there (an
    // input edited, read and put back in its view is item 2 of issue 38 as much as in the workspace).
    if (sandbox_)
        if (std::optional<audit::TaskAudit> seen = sandbox_->record_of(i))
            for (const std::string& path : seen->findings.discarded_writes)
                if (held(all, files, path))
                    return path + " changed while it ran, in the task's own view over the overlay (not kept in the "
                                  "workspace, but the task may have read it changed there): the result may hold what "
                                  "its key does not say";
    return std::nullopt;
}

}  // namespace qk::run
