// Scratch directories ("qk:sandbox": { "scratch": [...] }): directories a task's tool keeps state in that
// nothing declares. qk empties each one before the task runs, with or without the sandbox, so nothing an
// earlier run left there can change a result. Because emptying deletes, every rule here is about never
// deleting anything but what the entry names: inside the workspace, outside .git/.qk/node_modules, holding
// no project, and never reached through a symbolic link (which could lead out of the workspace).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::run {

// The target's scratch entries with {workspaceRoot} (only at the start), {projectRoot} and {projectName}
// resolved, as workspace-relative normalised paths ("packages/a/.cache": no ".", "..", "//" or trailing
// "/"), in the order written, an entry repeated kept once. Refuses, naming the task, the entry and why: an
// entry outside the workspace (absolute, escaping by "..", or the root itself), one that is or lies in
// .git, .qk or node_modules (any case), and one with glob syntax (an entry names one directory).
// Reads nothing from disk.
Result<std::vector<std::string>> resolve_scratch(const workspace::Workspace& ws, const workspace::Project& project,
                                                 const workspace::Target& target);

// The rules that need the project list and the disk, for directories resolve_scratch returned: none
// holds a project (a project root equal to it or under it), nor qk's cache or state (a .qk directory),
// and none is or lies under a symbolic link or a file, looking at each component from the workspace root
// down with lstat. A directory that does not exist yet passes: empty_scratch creates it.
Status check_scratch(const workspace::Workspace& ws, const std::vector<std::string>& dirs);

// Two tasks of one run may neither share a scratch directory nor have one inside the other's (by path
// components: "a/b" is inside "a", "a/bc" is not), since each empties it before it runs. The error names
// both tasks and both directories. A task may repeat or nest its own directories.
using TaskScratch = std::pair<std::string /*task id*/, std::vector<std::string> /*resolved dirs*/>;
Status check_scratch_overlaps(const std::vector<TaskScratch>& tasks);

// Empties the scratch directory `dir` (workspace-relative, as resolve_scratch gives it) under the
// workspace `root` just before its task runs: walks to it one component at a time from the root with
// openat(O_NOFOLLOW), so a symbolic link planted on the way since check_scratch (by an earlier task) is
// refused rather than followed; creates missing components; removes everything inside without following
// links (a link is removed, never its target), making read-only subdirectories writable to do so; keeps
// the directory itself. Does not cross into another file system mounted inside it.
Status empty_scratch(const std::filesystem::path& root, const std::string& dir);

}  // namespace qk::run
