// qk report fix's view of declared paths: whether a list already holds a value (so a second run writes
// nothing), and many files read in one directory written as one glob when it selects exactly those files.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qk/key/file_index.hpp"
#include "qk/workspace/json.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::cli {

// How many files read directly in one directory make a glob rather than a value each.
constexpr std::size_t kGlobFiles = 5;

// Whether `list` (a target's inputs or outputs, a named input's entries) holds `value`: the same string,
// or a path or glob written from the same root ("{projectRoot}/", "{workspaceRoot}/") that selects it as
// Nx reads a fileset (a directory selects what lies under it), with no negation in the list excluding it.
bool list_covers(const workspace::Json* list, std::string_view value);

// The workspace files a list's values name, asked only when a fold is possible: scanning the workspace
// costs what a run's file index costs. nullptr when it cannot be scanned (nothing is folded then).
using IndexSource = std::function<const key::FileIndex*()>;

// The workspace's file index, scanned the first time it is asked for and kept.
IndexSource scan_when_asked(const workspace::Workspace& ws);

// `values` in their order, each group of at least kGlobFiles plain paths directly in one directory
// replaced, where the first of them stood, by one glob: `dir/*` when they are every file the index lists
// directly there, else `dir/*.ext` for those with one extension when they are every such file. A
// "{projectRoot}/" group is checked in the directory of each of `roots` (workspace-relative project roots,
// "." for the root project), a "{workspaceRoot}/" one at the root. The index is the key's view (ignore
// files applied): the glob keys and allows exactly the files the values name, no more, and a file the
// index leaves out (git-ignored) keeps the group as it is, since a glob would not select it.
std::vector<std::string> fold_into_globs(const std::vector<std::string>& values, std::span<const std::string> roots,
                                         const IndexSource& index);

}  // namespace qk::cli
