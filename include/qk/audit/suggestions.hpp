// What to declare for a task's findings, in its target's own configuration terms: the outputs a write
// outside them asks for ("{projectRoot}/dist" for a directory the task created, whole), the inputs for a
// read (or ignoreReads when it cannot change the result), a `^` input for files of its dependencies,
// externalDependencies for an installed package the key leaves out, packageExtensions for one reached
// through pnpm's hoisting. The summary and --sandbox-report both show them.
#pragma once

#include <string>
#include <vector>

#include "qk/audit/findings.hpp"

namespace qk::audit {

std::vector<Suggestion> suggest(const TaskAudit& task);

// Stray writes with each directory the task created outside its outputs folded into one entry, "dir/":
// the terminal shows one line for the 38 files a build wrote under an undeclared dist.
std::vector<std::string> group_created(const TaskFindings& findings);

// One suggestion as the terminal shows it, a fragment of the target's configuration:
// `"outputs": ["{projectRoot}/dist"]`, then `, or "ignoreReads": [...] if they cannot change its result`.
// At most `shown` values of each list are written, then how many more.
std::string suggestion_line(const Suggestion& s, std::size_t shown = 4);

}  // namespace qk::audit
