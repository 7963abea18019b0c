// qk report fix's view of what a key may leave out: reads a tool makes only to find paths, named in a
// target's "qk:ultracache".ignoreReads (as the summary advises), and writes no declaration allows.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "qk/workspace/workspace.hpp"

namespace qk::cli {

// Whether an output value lies in node_modules: only what was installed there is a write outside the
// outputs (the rules allow the rest), and no declaration allows it.
bool writes_installed(std::string_view value);

// What `key` lies in, in a target's configuration: ignoreReads in "qk:ultracache", the others at its top.
void add_holder(std::vector<std::string>& path, std::string_view key);

// Whether the target takes "qk:ultracache" from targetDefaults.<its name> (or would from one made): the
// entry applies, and what the target holds is the entry's (its project layers do not name their own).
bool inherits_ignore(const workspace::Workspace& ws, const workspace::Target& t);

// {workspaceRoot} globs of siblings folded once more where they differ in one more directory, as the
// summary folds them (examples/*/atoms/package.json and examples/*/simple/package.json as
// examples/*/*/package.json): what a tool scanning the workspace reads, said once.
std::vector<std::string> fold_deep(const std::vector<std::string>& values);

}  // namespace qk::cli
