#include "input_tokens.hpp"

#include <fmt/format.h>

namespace qk::key {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to)
{
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
}

}  // namespace

bool leaves_workspace(std::string_view path)
{
    if (path.starts_with("/"))
        return true;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos)
            end = path.size();
        if (path.substr(start, end - start) == "..")
            return true;
        start = end + 1;
    }
    return false;
}

Result<ResolvedPattern> resolve_fileset_tokens(std::string_view written, const workspace::Project& project)
{
    std::string_view body = written;
    bool negated = body.starts_with("!");
    if (negated)
        body.remove_prefix(1);
    ResolvedPattern out;
    std::string s;
    if (body.starts_with("{workspaceRoot}")) {
        out.project_group = false;
        s = std::string(body.substr(15));
        if (s.starts_with("/"))
            s.erase(0, 1);
    } else if (body.starts_with("{projectRoot}")) {
        out.project_group = true;
        s = std::string(body);
        if (project.root == ".") {
            replace_all(s, "{projectRoot}/", "");
            replace_all(s, "{projectRoot}", "");
        } else {
            replace_all(s, "{projectRoot}", project.root);
        }
    } else {
        return error(fmt::format("input \"{}\" needs a leading {{projectRoot}}/ or {{workspaceRoot}}/", written));
    }
    if (s.find("{workspaceRoot}") != std::string::npos)
        return error(fmt::format("input \"{}\": {{workspaceRoot}} may only start a path", written));
    replace_all(s, "{projectName}", project.name);
    if (s.empty())
        s = "**";  // the whole root: "{workspaceRoot}" or a root project's "{projectRoot}"
    if (leaves_workspace(s))
        return error(fmt::format("input \"{}\" names a path outside the workspace", written));
    out.pattern = negated ? "!" + s : s;
    return out;
}

}  // namespace qk::key
