// A target's "qk:warm" resolved as the rules resolve it (src/rules/rule_builder.cpp): Nx's tokens, then a
// workspace-relative path, as outputs are; the cache keeps and restores warm state under these.
#include <fmt/format.h>

#include "qk/key/output_files.hpp"
#include "qk/key/warm_state.hpp"
#include "qk/workspace/tokens.hpp"

namespace qk::key {

Result<std::vector<std::string>> resolve_warm_paths(const workspace::Project& project, const workspace::Target& target)
{
    std::vector<std::string> out;
    out.reserve(target.warm.size());
    for (const std::string& written : target.warm) {
        auto r = workspace::resolve_tokens(written, project);
        if (!r)
            return error(fmt::format("qk:warm: \"{}\": {}", written, r.error().message));
        auto path = workspace::relative_path(r->text);
        if (!path || path->empty())
            return error(fmt::format("qk:warm: \"{}\" must name paths inside the workspace, as "
                                     "\"{{projectRoot}}/.eslintcache\"",
                                     written));
        out.push_back(r->negated ? "!" + *path : *path);
    }
    // Compiled once here so that a pattern the cache would refuse is said before anything runs.
    if (!out.empty())
        if (auto set = OutputSet::compile(out); !set)
            return error(fmt::format("qk:warm: {}", set.error().message));
    return out;
}

}  // namespace qk::key
