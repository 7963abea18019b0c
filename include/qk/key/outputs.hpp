// A task's outputs as Nx resolves them (tasks-runner/utils.ts getOutputsForTargetAndConfiguration):
// tokens replaced, an output whose token cannot be resolved dropped, Nx's defaults when none are declared.
#pragma once

#include <string>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::key {

struct ResolvedOutputs {
    std::vector<std::string> paths;    // workspace-relative paths or globs, "!" for an exclusion, in order
    std::vector<std::string> dropped;  // as written, those whose token named nothing (an unset option)
    bool defaulted = false;            // none declared: Nx's defaults for build/prepare or outputPath
};

// `configuration` selects configurations[configuration] over options for {options.x}. Errors: an
// output outside the workspace, {workspaceRoot} elsewhere than at the start, an output not a string.
Result<ResolvedOutputs> resolve_outputs(const workspace::Project& project, const workspace::Target& target,
                                        const std::string& configuration = {});

}  // namespace qk::key
