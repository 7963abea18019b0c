// What qk report fix says of installed packages a task read through pnpm's hoisting: where the remedy
// (a dependency of the package importing each, in pnpm's packageExtensions) does not fit, why; else what
// the report cannot say (which package imports each) and where pnpm reads the setting.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "qk/workspace/workspace.hpp"

namespace qk::cli {

// Where the workspace's pnpm reads packageExtensions, in words: pnpm-workspace.yaml's (pnpm 10 and later,
// and when the root package.json names no pnpm), or the root package.json's "pnpm" (pnpm 9).
std::string package_extensions_home(const workspace::Workspace& ws);
// The same file, workspace-relative: "pnpm-workspace.yaml" or "package.json".
std::string package_extensions_file(const workspace::Workspace& ws);

// The lines to do by hand for `hoisted` (package name -> how many tasks read it), one per remedy.
std::vector<std::string> hoisted_lines(const std::map<std::string, std::size_t>& hoisted, const workspace::Workspace& ws);

}  // namespace qk::cli
