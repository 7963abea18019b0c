#include "input_tokens.hpp"

#include <fmt/format.h>

#include "qk/workspace/tokens.hpp"

namespace qk::key {

bool leaves_workspace(std::string_view path) { return !workspace::relative_path(path); }

Result<ResolvedPattern> resolve_fileset_tokens(std::string_view written, const workspace::Project& project)
{
    auto r = workspace::resolve_tokens(written, project);
    if (!r)
        return error(fmt::format("input \"{}\": {}", written, r.error().message));
    using Lead = workspace::ResolvedTokens::Lead;
    if (r->lead == Lead::none)
        return error(fmt::format("input \"{}\" needs a leading {{projectRoot}}/ or {{workspaceRoot}}/", written));
    auto path = workspace::relative_path(r->text);
    if (!path)
        return error(fmt::format("input \"{}\" {}", written, workspace::outside_path_advice(written, r->text)));
    ResolvedPattern out;
    out.project_group = r->lead == Lead::project_root;
    if (path->empty())
        *path = "**";  // the whole root: "{workspaceRoot}" or a root project's "{projectRoot}"
    out.pattern = r->negated ? "!" + *path : *path;
    return out;
}

}  // namespace qk::key
