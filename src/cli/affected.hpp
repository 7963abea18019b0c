// qk affected: the projects a change touches, with the projects that depend on them, as Nx's affected
// reads a change: a changed file inside a project touches that project; a changed file outside every
// project (the lockfile, nx.json, the root package.json, a shared config) touches the projects whose
// requested tasks key it; and any changed file touches the projects whose requested tasks' inputs name
// it with {workspaceRoot} (a root project's `{workspaceRoot}/**/*`: a change anywhere). Conservative for
// files held only by effect (nx.json, the lockfile): any change to one touches every task that keys it,
// even where the part it keys did not change.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "qk/key/session.hpp"
#include "qk/util/result.hpp"

namespace qk::cli {

// The files that differ, workspace-relative: between the merge base of `base` and `head` and `head`
// when a head is given; else between the merge base of `base` and HEAD and the working tree, untracked
// files included. Errors name the git command that failed and what it printed.
Result<std::vector<std::string>> changed_files(const std::filesystem::path& root, const std::string& base,
                                               const std::optional<std::string>& head);

// The base to compare against: `given` (--base) as it is; without one, `default_base` (nx.json's
// defaultBase), else "main", which must then name a commit here: else an error saying what was tried
// and to pass --base.
Result<std::string> affected_base(const std::filesystem::path& root, const std::string& given,
                                  const std::string& default_base);

// The affected projects' names, sorted, for a session planned with the requested targets.
Result<std::vector<std::string>> affected_projects(key::Session& session, const std::vector<std::string>& changed);

}  // namespace qk::cli
