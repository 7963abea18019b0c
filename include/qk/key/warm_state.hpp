// Warm state: a cache a tool keeps in the project between runs that nothing declares as an output (an
// eslint or stylelint cache, a test runner's timings), declared on its target as "qk:warm". The local
// cache keeps it with the task's entry, apart from the outputs, and puts it back where the workspace has
// none: with the entry it was stored with when that entry is restored, and from the task's newest entry
// before the task runs on a miss, so the tool starts warm on a fresh checkout. Only a tool that checks
// each entry of its cache against what it read may be given one; for any other, a scratch directory.
#pragma once

#include <string>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::key {

// The target's warm paths with Nx's tokens resolved, workspace-relative patterns as outputs are ("!" to
// exclude). Errors: a token that cannot be resolved, a path leaving the workspace.
Result<std::vector<std::string>> resolve_warm_paths(const workspace::Project& project, const workspace::Target& target);

// What LocalCache::restore_warm did, per declared warm path (its literal root: the path itself, or the
// directory a glob starts in).
struct WarmRestored {
    std::vector<std::string> restored;  // absent in the workspace: the stored state put in place
    std::vector<std::string> kept;      // present in the workspace, which is the newer: left as it is
    std::vector<std::string> links;     // a symbolic link at or on the way to it: never followed, left alone
    std::size_t files = 0;              // files, links and directories put in place
};

}  // namespace qk::key
