// What to declare for a task's findings, in its target's own configuration terms: the outputs a write
// outside them asks for ("{projectRoot}/dist" for a directory the task created, whole), the inputs for a
// read (or ignoreReads when it cannot change the result), a `^` input for files of its dependencies,
// externalDependencies for an installed package the key leaves out, packageExtensions for one reached
// through pnpm's hoisting; under enforce, what its refusals ask for. What many tasks read is said once,
// as a change in nx.json (suggest_shared). The summary and --sandbox-report both show them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "qk/audit/findings.hpp"

namespace qk::audit {

// With `run`, the paths it declares once for many tasks (RunAudit::shared) are left out: the summary
// says them once. Without, a task's suggestions are complete on their own, as the report keeps them.
std::vector<Suggestion> suggest(const TaskAudit& task, const RunAudit* run = nullptr);

// The nx.json change for run.shared_reads: one sharedGlobals entry for what is likely an input, and one
// per sibling glob that ignoreReads likely fits better. Empty when nothing is read by many.
std::vector<SharedSuggestion> suggest_shared(const RunAudit& run);

// Stray writes with each directory the task created outside its outputs folded into one entry, "dir/":
// the terminal shows one line for the 38 files a build wrote under an undeclared dist.
std::vector<std::string> group_created(const TaskFindings& findings);

// One suggestion as the terminal shows it, a fragment of the target's configuration:
// `"outputs": ["{projectRoot}/dist"]`, then `, or "ignoreReads": [...] if they cannot change its result`.
// At most `shown` values of each list are written, then how many more.
std::string suggestion_line(const Suggestion& s, std::size_t shown = 4);

// Under Landlock alone: whether a refused write of `path` changed a declared output directory itself, or
// a directory holding a declared output (a tool clearing its output before it writes), not a file in
// one. Landlock grants what lies beneath a directory, not the directory, so only the overlay allows it:
// nothing to declare.
bool output_itself(const TaskAudit& task, std::string_view path);

// A path with a part made for one run (vite's vite.config.ts.timestamp-1796405520738-3f2a1b.mjs, a
// `.tmp-<hex>` name, a long run of digits or hex digits, a UUID): it will not be there by that name next
// run, so it is never suggested as an input or an output.
bool temporary_name(std::string_view path);

// A file the key holds only by what it changes (nx.json, nx.local.json, pnpm-workspace.yaml, the pnpm
// lockfile, the root package.json, the project's project.json): a task must declare it to read it, so
// ignoreReads is never offered for it. `project_root` as TaskAudit's ("" when unknown).
bool held_by_effect(std::string_view path, std::string_view project_root);

// `paths` (sorted, unique) as globs where at least `at_least` of them differ in one directory only
// (packages/a/tsconfig.json, packages/b/tsconfig.json, ... as packages/*/tsconfig.json), each path in
// one group at most; the others as themselves. Sorted by glob.
struct SiblingGroup {
    std::string glob;                // the path itself, or one with a "*" segment
    std::vector<std::string> files;  // the paths it stands for
};
std::vector<SiblingGroup> fold_siblings(const std::vector<std::string>& paths, std::size_t at_least = 3);
// fold_siblings, then its globs folded again where they differ in one more directory, until nothing
// folds: examples/*/atoms/package.json and examples/*/simple/package.json as examples/*/*/package.json,
// the shape of a workspace's package globs.
std::vector<SiblingGroup> fold_siblings_deep(const std::vector<std::string>& paths, std::size_t at_least);
// Whether `path` is `glob`: a path, or one whose "*" segments each stand for one directory.
bool sibling_match(std::string_view glob, std::string_view path);
// Why ignoreReads likely fits a glob of siblings better than the inputs ("" when qk cannot tell): the
// same TypeScript configuration read in every directory is a tool finding paths (vite-tsconfig-paths), and
// every workspace package's package.json a package manager listing the workspace.
std::string prefer_ignore_for(std::string_view glob);

}  // namespace qk::audit
