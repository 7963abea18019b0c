#include "qk/key/outputs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "input_tokens.hpp"

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

const Json* lookup(const Json& root, std::string_view dotted)
{
    const Json* at = &root;
    while (at) {
        auto dot = dotted.find('.');
        at = at->find(dotted.substr(0, dot));
        if (dot == std::string_view::npos)
            return at;
        dotted.remove_prefix(dot + 1);
    }
    return nullptr;
}

// "./a/b/" -> "a/b"; "." -> "".
std::string normalise(std::string s)
{
    while (s.starts_with("./"))
        s.erase(0, 2);
    if (s == ".")
        s.clear();
    while (s.size() > 1 && s.ends_with("/"))
        s.pop_back();
    for (std::size_t at = s.find("/./"); at != std::string::npos; at = s.find("/./"))
        s.erase(at, 2);
    return s;
}

// nullopt when a token names nothing (the output is dropped, as Nx drops it).
Result<std::optional<std::string>> interpolate(const std::string& written, const workspace::Project& project,
                                               const Json& options)
{
    std::string s = written;
    bool negated = s.starts_with("!");
    if (negated)
        s.erase(0, 1);
    if (s.starts_with("{workspaceRoot}")) {
        s.erase(0, 15);
        if (s.starts_with("/"))
            s.erase(0, 1);
    }
    if (s.find("{workspaceRoot}") != std::string::npos)
        return error(fmt::format("output \"{}\": {{workspaceRoot}} may only start a path", written));
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        if (s[i] != '{') {
            out += s[i++];
            continue;
        }
        auto close = s.find('}', i);
        if (close == std::string::npos) {
            out += s.substr(i);
            break;
        }
        std::string token = s.substr(i + 1, close - i - 1);
        i = close + 1;
        if (token == "projectRoot") {
            out += project.root;
        } else if (token == "projectName") {
            out += project.name;
        } else if (token.starts_with("options.")) {
            const Json* v = lookup(options, std::string_view(token).substr(8));
            if (!v || v->is_null() || v->is_object() || v->is_array())
                return std::optional<std::string>();
            out += v->is_string() ? v->as_string() : v->dump();
        } else if (token.starts_with("project.")) {
            const Json* v = lookup(project.raw, std::string_view(token).substr(8));
            if (!v || !v->is_string())
                return std::optional<std::string>();
            out += v->as_string();
        } else {
            out += "{" + token + "}";  // a glob brace group, not a token
        }
    }
    out = normalise(out);
    if (out.empty() || leaves_workspace(out))
        return error(fmt::format("output \"{}\" of {} resolves to \"{}\", which is not inside the workspace",
                                 written, project.name, out.empty() ? "." : out));
    return std::optional<std::string>(negated ? "!" + out : out);
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
        if (!r)
            return error(fmt::format("{}:{}: {}", project.name, target.name, r.error().message));
        if (!*r)
            res.dropped.push_back(w);
        else if (std::find(res.paths.begin(), res.paths.end(), **r) == res.paths.end())
            res.paths.push_back(std::move(**r));
    }
    return res;
}

}  // namespace qk::key
