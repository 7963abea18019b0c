// What to declare for a task's findings, in its target's own configuration terms: the outputs a write
// outside them asks for ("{projectRoot}/dist" for a directory the task created, whole), the inputs for a
// read (or ignoreReads when it cannot change the result), externalDependencies for an installed package
// the key leaves out, packageExtensions for one reached through pnpm's hoisting. The summary and
// --sandbox-report both show them.
#pragma once

#include <string>
#include <vector>

#include "qk/audit/findings.hpp"

namespace qk::audit {

struct Suggestion {
    std::string finding;  // the kind it answers: "strayWrites", "readsOutsideInputs", ...
    std::string declare;  // where: "outputs", "inputs", "externalDependencies", "packageExtensions"
    std::vector<std::string> values;  // what to add there
};

// `project_root`: the task's project root, workspace-relative ("." for the root project).
std::vector<Suggestion> suggest(const TaskFindings& findings, const std::string& project_root);

// Stray writes with each directory the task created outside its outputs folded into one entry, "dir/":
// the terminal shows one line for the 38 files a build wrote under an undeclared dist.
std::vector<std::string> group_created(const TaskFindings& findings);

}  // namespace qk::audit
