#include "qk/workspace/tokens.hpp"

#include <fmt/format.h>

namespace qk::workspace {
namespace {

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

// {project.x.y}: the project's merged configuration, its targets' from each target's own.
const Json* project_field(const Project& project, std::string_view path)
{
    if (!path.starts_with("targets."))
        return lookup(project.raw_without_targets, path);
    std::string_view rest = path.substr(8);
    const std::size_t dot = rest.find('.');
    const Target* target = project.find_target(rest.substr(0, dot));
    return target && dot != std::string_view::npos ? lookup(target->raw, rest.substr(dot + 1)) : nullptr;
}

}  // namespace

Result<ResolvedTokens> resolve_tokens(std::string_view written, const Project& project, const TokenPolicy& policy)
{
    std::string_view s = written;  // what is left to read
    ResolvedTokens out;
    out.negated = s.starts_with('!');
    if (out.negated)
        s.remove_prefix(1);
    if (s.starts_with("{workspaceRoot}")) {
        out.lead = ResolvedTokens::Lead::workspace_root;
        s.remove_prefix(15);
        if (!s.empty() && s.front() != '/')
            return error("{workspaceRoot} must be followed by /", ErrorKind::workspace_root_without_slash);
        if (!s.empty())
            s.remove_prefix(1);
    } else if (s.starts_with("{projectRoot}")) {
        out.lead = ResolvedTokens::Lead::project_root;
    }
    while (!s.empty()) {
        std::size_t open = s.find('{');
        out.text.append(s.substr(0, open));
        if (open == std::string_view::npos)
            break;
        s.remove_prefix(open);
        std::size_t close = s.find('}');
        if (close == std::string_view::npos) {
            if (policy.other == TokenPolicy::Other::refuse)
                return error(fmt::format("holds \"{}\": braces are glob syntax", s));
            out.text.append(s);
            break;
        }
        std::string_view token = s.substr(1, close - 1);
        s.remove_prefix(close + 1);
        if (token == "projectRoot") {
            out.text.append(project.root);
        } else if (token == "projectName") {
            out.text.append(project.name);
        } else if (token == "workspaceRoot") {
            return error("{workspaceRoot} may only start a path", ErrorKind::workspace_root_not_first);
        } else if (policy.other == TokenPolicy::Other::lookup &&
                   (token.starts_with("options.") || token.starts_with("project."))) {
            const bool option = token.starts_with("options.");
            const Json* v = option ? (policy.options ? lookup(*policy.options, token.substr(8)) : nullptr)
                                   : project_field(project, token.substr(8));
            if (!v || v->is_null() || v->is_object() || v->is_array() || (!option && !v->is_string())) {
                out.unresolved = true;
                return out;
            }
            out.text.append(v->is_string() ? v->as_string() : v->dump());
        } else if (policy.other == TokenPolicy::Other::refuse) {
            return error(fmt::format("holds \"{{{}}}\", which is neither {{projectRoot}}, {{projectName}} nor "
                                     "{{workspaceRoot}}, and braces are glob syntax",
                                     token));
        } else {
            out.text.append("{").append(token).append("}");  // a glob's brace group, not a token
        }
    }
    return out;
}

std::optional<std::string> relative_path(std::string_view path, bool parent_steps)
{
    if (path.starts_with('/'))
        return std::nullopt;
    std::string out;
    for (std::size_t start = 0; start <= path.size();) {
        std::size_t slash = path.find('/', start);
        std::size_t end = slash == std::string_view::npos ? path.size() : slash;
        std::string_view part = path.substr(start, end - start);
        if (part == "..") {
            if (out.empty() || !parent_steps)
                return std::nullopt;
            std::size_t last = out.rfind('/');
            out.erase(last == std::string::npos ? 0 : last);
        } else if (!part.empty() && part != ".") {
            if (!out.empty())
                out += '/';
            out.append(part);
        }
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return out;
}

std::string outside_path_advice(std::string_view written, std::string_view resolved)
{
    if (resolved.starts_with('/'))
        return "is an absolute path; write it from the workspace's root or the project's, as "
               "\"{workspaceRoot}/dist\" or \"{projectRoot}/dist\"";
    auto inside = relative_path(resolved, true);
    if (!inside)
        return fmt::format("resolves to \"{}\", which leads outside the workspace; name a path inside it", resolved);
    // Inside, but spelled with "..": the rules, the cache and globs take plain paths, so say the plain one.
    if (inside->empty())
        return "steps up with \"..\" to the workspace's root itself; name the paths inside it you mean";
    const bool negated = written.starts_with('!');
    return fmt::format("steps up with \"..\"; write it without, as \"{}{{workspaceRoot}}/{}\"", negated ? "!" : "",
                       *inside);
}

}  // namespace qk::workspace
