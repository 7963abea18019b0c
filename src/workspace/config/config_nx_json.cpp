// nx.json, the file it extends, and nx.local.json.
//
// Nx reads `extends` with require.resolve(extends, {paths: [root]}) and merges shallowly,
// {...base, ...nxJson} (nx/src/config/nx-json.ts readNxJson, devkit readNxJsonExtends). qk resolves a
// relative path against the root and anything else under the root's node_modules. nx.local.json is
// qk's: a developer's overrides, merged member by member on top (objects recursively).
#include <fmt/format.h>

#include "config_loader.hpp"
#include "config_merge.hpp"
#include "config_validate.hpp"

namespace qk::workspace::detail {

namespace fs = std::filesystem;

Result<Json> read_optional_json(const fs::path& root, const std::string& relative, bool* found)
{
    std::error_code ec;
    fs::path p = root / relative;
    if (!fs::is_regular_file(p, ec)) {
        *found = false;
        return Json();
    }
    *found = true;
    return read_json_file(p, relative);
}

namespace {

// The workspace-relative path `extends` names, or an error saying where it was looked for.
Result<std::string> resolve_extends(const fs::path& root, const Json& extends)
{
    const std::string& spec = extends.as_string();
    std::vector<std::string> candidates;
    if (spec.rfind("./", 0) == 0 || spec.rfind("../", 0) == 0) {
        candidates.push_back(fs::path(spec).lexically_normal().generic_string());
    } else if (!spec.empty() && spec[0] == '/') {
        std::error_code ec;
        fs::path rel = fs::path(spec).lexically_relative(root);
        candidates.push_back(rel.empty() ? spec : rel.generic_string());
    } else {
        candidates.push_back("node_modules/" + spec);
        candidates.push_back("node_modules/" + spec + ".json");
    }
    for (const auto& c : candidates) {
        std::error_code ec;
        if (fs::is_regular_file(root / c, ec))
            return c;
    }
    return error(fmt::format("nx.json:{}:{}: extends \"{}\" names no file (looked for {}); install the package "
                             "it names or fix the path",
                             extends.line(), extends.column(), spec, candidates.front()));
}

}  // namespace

Result<NxConfig> read_nx_config(const fs::path& root, Workspace::Files& files)
{
    NxConfig config;
    bool found = false;
    QK_TRY(nx, read_optional_json(root, "nx.json", &found));
    Json merged = Json::object();
    if (found) {
        files.nx_json = "nx.json";
        QK_TRY_STATUS(validate_nx_json(*nx, "nx.json"));
        merged = *nx;
        if (const Json* extends = nx->find("extends")) {
            QK_TRY(rel, resolve_extends(root, *extends));
            QK_TRY(base, read_json_file(root / *rel, *rel));
            QK_TRY_STATUS(validate_nx_json(*base, *rel));
            files.nx_extends = *rel;
            Json shallow = *base;
            for (const auto& [k, v] : nx->as_object())
                shallow.set(k, v);
            merged = std::move(shallow);
        }
    }
    QK_TRY(local, read_optional_json(root, "nx.local.json", &found));
    if (found) {
        QK_TRY_STATUS(validate_nx_json(*local, "nx.local.json"));
        files.nx_local_json = "nx.local.json";
        merged = deep_merge(merged, *local);
    }
    config.raw = merged;
    const Json* named = merged.find("namedInputs");
    config.named_inputs = named ? *named : Json::object();
    const Json* td = merged.find("targetDefaults");
    config.target_defaults = td ? *td : Json::object();
    // Run options: the top level wins over tasksRunnerOptions.default.options (validated already).
    const Json* runner_options = nullptr;
    if (const Json* tro = merged.find("tasksRunnerOptions"))
        if (const Json* def = tro->find("default"))
            runner_options = def->find("options");
    for (const Json* at : {runner_options, static_cast<const Json*>(&merged)}) {
        if (!at || !at->is_object())
            continue;
        if (const Json* p = at->find("parallel"))
            config.parallel = static_cast<unsigned>(p->as_number());
        if (const Json* skip = at->find("skipNxCache"))
            config.skip_cache = skip->as_bool();
    }
    // tasksRunnerOptions.default.options.cacheableOperations (Nx before 17; still read by Nx when set).
    if (const Json* tro = merged.find("tasksRunnerOptions"))
        if (const Json* def = tro->find("default"))
            if (const Json* opts = def->find("options"))
                if (const Json* ops = opts->find("cacheableOperations"); ops && ops->is_array())
                    for (const auto& op : ops->as_array())
                        if (op.is_string())
                            config.cacheable_operations.push_back(op.as_string());
    // nx.local.json over nx.json field by field; nx.json's "qk" over its base's whole (a shallow merge).
    auto file_of = [&](std::string_view key) -> std::string {
        const Json* lq = found ? local->find("qk") : nullptr;
        const Json* lr = lq ? lq->find("remoteCache") : nullptr;
        if (lr && lr->find(key))
            return files.nx_local_json;
        return files.nx_extends.empty() || nx->find("qk") ? std::string("nx.json") : files.nx_extends;
    };
    config.remote_cache = read_remote_cache_config(merged, file_of);
    config.network = read_workspace_network(merged);
    config.inputs_never_read_after_runs =
        read_inputs_never_read_after_runs(merged, config.inputs_never_read_after_runs);
    return config;
}

}  // namespace qk::workspace::detail
