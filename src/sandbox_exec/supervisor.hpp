// Running one command in its sandbox and seeing it to its end: the namespaces and overlay (overlay mode),
// pid 1 of the command's pid namespace reaping what it leaves, Landlock just before exec, qk watched so
// that nothing outlives it, and the result written for qk.
#pragma once

#include <string>
#include <vector>

#include "qk/enforce/sandbox_plan.hpp"

namespace qk::sandbox_exec {

// Runs `argv` under `plan`; returns the exit status for qk-sandbox-exec: the command's (128 + signal
// when a signal ended it), or enforce::kSetupFailedStatus when the sandbox could not be built. Must be
// called while the process has one thread (unshare of a user namespace requires it).
int run_sandboxed(const enforce::SandboxPlan& plan, const std::vector<std::string>& argv);

}  // namespace qk::sandbox_exec
