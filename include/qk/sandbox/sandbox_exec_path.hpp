// Where the helper that runs each command under --sandbox=enforce is: qk-sandbox-exec, installed beside qk.
#pragma once

#include <string>

#include "qk/util/result.hpp"
#include "qk/util/settings.hpp"

namespace qk::sandbox {

// The qk-sandbox-exec beside this qk (settings.exec, QK_SANDBOX_EXEC, when set); an Error saying how to
// fix a missing one.
Result<std::string> sandbox_exec_path(const SandboxSettings& settings);

}  // namespace qk::sandbox
