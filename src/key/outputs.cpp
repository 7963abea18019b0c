#include "qk/key/outputs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "qk/util/special_names.hpp"
#include "qk/workspace/tokens.hpp"

namespace qk::key {

using workspace::Json;

namespace {

// options, then configurations[configuration] over them (a shallow merge, as Nx's
// {...options, ...configurations[cfg]}).
Json merged_options(const workspace::Target& target, const std::string& configuration)
{
    Json out = target.options.is_object() ? target.options : Json::object();
    if (configuration.empty() || !target.configurations.is_object())
        return out;
    if (const Json* cfg = target.configurations.find(configuration); cfg && cfg->is_object())
        for (const auto& [k, v] : cfg->as_object())
            out.set(k, v);
    return out;
}

// nullopt when a token names nothing (the output is dropped, as Nx drops it). What qk restores from the
// cache it first clears: an output is a plain path inside the workspace, never its root, nor in .git or
// .qk, so that no configuration can make a restore remove or write anything else.
Result<std::optional<std::string>> interpolate(const std::string& written, const workspace::Project& project,
                                               const Json& options)
{
    workspace::TokenPolicy policy;
    policy.other = workspace::TokenPolicy::Other::lookup;
    policy.options = &options;
    auto r = workspace::resolve_tokens(written, project, policy);
    if (!r)
        return error(fmt::format("output \"{}\": {}", written, r.error().message));
    if (r->unresolved)
        return std::optional<std::string>();
    auto out = workspace::relative_path(r->text);
    const auto plain = workspace::relative_path(r->text, true);
    if (!out && !(plain && plain->empty()))
        return error(fmt::format("output \"{}\" {}", written, workspace::outside_path_advice(written, r->text)));
    if (!out || out->empty())
        return error(fmt::format("output \"{}\" names the whole workspace, which qk would clear to restore the "
                                 "task from the cache; name the directories the task writes, such as "
                                 "\"{{projectRoot}}/dist\"",
                                 written));
    if (const SpecialDir d = special_tree(*out); d == SpecialDir::git || d == SpecialDir::qk)
        return error(fmt::format("output \"{}\" lies in {}, which is {}; a task's outputs are its own files",
                                 written, d == SpecialDir::git ? ".git" : ".qk",
                                 d == SpecialDir::git ? "git's" : "qk's own state (its cache)"));
    return std::optional<std::string>(r->negated ? "!" + *out : *out);
}

}  // namespace

Result<ResolvedOutputs> resolve_outputs(const workspace::Project& project, const workspace::Target& target,
                                        const std::string& configuration)
{
    ResolvedOutputs res;
    Json options = merged_options(target, configuration);
    std::vector<std::string> written;
    if (target.outputs) {
        if (!target.outputs->is_array())
            return error(fmt::format("{}:{}: outputs must be an array of paths, found {}", project.name, target.name,
                                     target.outputs->describe()));
        for (const Json& o : target.outputs->as_array()) {
            if (!o.is_string())
                return error(fmt::format("{}:{}: outputs holds {}, expected paths", project.name, target.name,
                                         o.describe()));
            written.push_back(o.as_string());
        }
    } else if (const Json* op = options.find("outputPath"); op && (op->is_string() || op->is_array())) {
        res.defaulted = true;
        if (op->is_string())
            written.push_back(op->as_string());
        else
            for (const Json& o : op->as_array())
                if (o.is_string())
                    written.push_back(o.as_string());
    } else if (target.name == "build" || target.name == "prepare") {
        res.defaulted = true;
        written = {"{workspaceRoot}/dist/{projectRoot}", "{projectRoot}/dist", "{projectRoot}/build",
                   "{projectRoot}/public"};
        if (project.root == ".")
            written = {"{workspaceRoot}/dist", "{projectRoot}/build", "{projectRoot}/public"};
    }
    for (const std::string& w : written) {
        auto r = interpolate(w, project, options);
        if (!r) {
            // Where: the target's outputs, or the outputPath option they default to.
            const std::string where = target.configured_in();
            return error(fmt::format("{}:{}: {} (its {}{})", project.name, target.name, r.error().message,
                                     res.defaulted ? "options.outputPath" : "outputs",
                                     where.empty() ? "" : " in " + where));
        }
        if (!*r)
            res.dropped.push_back(w);
        else if (std::find(res.paths.begin(), res.paths.end(), **r) == res.paths.end())
            res.paths.push_back(std::move(**r));
    }
    return res;
}

}  // namespace qk::key
