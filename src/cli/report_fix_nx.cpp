// Where an edit of nx.json reaches (report_fix_nx.hpp).
#include "report_fix_nx.hpp"

#include "qk/key/inputs.hpp"
#include "qk/util/io.hpp"
#include "qk/workspace/glob.hpp"

namespace qk::cli {

namespace {

using workspace::Json;

std::optional<Json> parsed(const workspace::Workspace& ws, const std::string& file)
{
    if (file.empty())
        return std::nullopt;
    auto text = read_file((ws.root() / file).string());
    auto doc = text ? workspace::parse_json(*text, file, workspace::TrailingCommas::allow) : Result<Json>(text.error());
    return doc ? std::optional<Json>(std::move(*doc)) : std::nullopt;
}

const Json* member(const Json* object, std::string_view key)
{
    return object && object->is_object() ? object->find(key) : nullptr;
}

// Whether `inputs` (a target's, or a named input's entries) reach the named input `name` through the
// project's named inputs, as Nx expands them (a "^" entry is the dependencies', not the task's own).
bool reaches(const Json& inputs, const Json& named, std::string_view name, int depth = 0)
{
    if (!inputs.is_array() || depth > 16)
        return false;
    for (const Json& item : inputs.as_array()) {
        if (!item.is_string())
            continue;
        const std::string& entry = item.as_string();
        if (entry == name)
            return true;
        if (const Json* def = named.find(entry); def && reaches(*def, named, name, depth + 1))
            return true;
    }
    return false;
}

}  // namespace

NxText::NxText(const workspace::Workspace& ws)
    : ws_(ws), doc_(parsed(ws, ws.files().nx_json)), local_(parsed(ws, ws.files().nx_local_json))
{
}

bool NxText::takes_effect(std::initializer_list<std::string_view> path) const
{
    if (!doc_)
        return false;
    const Json *text = &*doc_, *merged = &ws_.nx().raw, *local = local_ ? &*local_ : nullptr;
    for (std::string_view step : path) {
        text = member(text, step);
        merged = member(merged, step);
        local = member(local, step);
        if ((text == nullptr) != (merged == nullptr))
            return false;
    }
    return local == nullptr && (text == nullptr || *text == *merged);
}

bool takes_shared_globals(const workspace::Workspace& ws, const workspace::Project& project,
                          const workspace::Target& target)
{
    const Json* shared = ws.nx().named_inputs.find(kSharedGlobals);
    if (!shared || !shared->is_array() ||
        (project.named_inputs.is_object() && project.named_inputs.find(kSharedGlobals)))
        return false;
    return reaches(key::target_inputs(target), ws.named_inputs_for(project), kSharedGlobals);
}

bool inherits_by_name(const workspace::Workspace& ws, const workspace::Target& t, std::string_view key)
{
    if (key == "inputs" ? t.names_inputs : t.names_outputs)
        return false;
    if (t.target_default_key == t.name)
        return true;
    if (!t.target_default_key.empty() || ws.nx().target_defaults.find(t.name))
        return false;
    // None applies. An entry made by the name would also take the place of a glob's for other tasks of
    // the target (one that did not fit this task's executor or command, so this task has none).
    for (const auto& [key, entry] : ws.nx().target_defaults.as_object()) {
        auto glob = workspace::Glob::compile(key);
        if (glob && !glob->is_literal() && glob->matches(t.name))
            return false;
    }
    return true;
}

}  // namespace qk::cli
