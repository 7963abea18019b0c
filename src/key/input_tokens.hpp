// Nx's tokens in input and output paths: {workspaceRoot} (only at the start), {projectRoot} (for the
// root project "{projectRoot}/" is deleted) and {projectName}.
#pragma once

#include <string>
#include <string_view>

#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::key {

struct ResolvedPattern {
    std::string pattern;  // workspace-relative, "!" kept in front of a negation
    bool project_group;   // written with {projectRoot}: matched against the project's own files
};

// An input fileset (or json file) of `project`. Error: no leading token, {workspaceRoot} elsewhere than
// at the start, a path leaving the workspace.
Result<ResolvedPattern> resolve_fileset_tokens(std::string_view written, const workspace::Project& project);

// True when `path` (workspace-relative, '/'-separated) is absolute or steps out with "..".
bool leaves_workspace(std::string_view path);

}  // namespace qk::key
