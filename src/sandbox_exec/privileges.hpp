// What the command gives up before it runs: the terminal qk runs in, and every capability but those a
// tool needs to work with files it may reach anyway.
#pragma once

#include "setup_error.hpp"

namespace qk::sandbox_exec {

// A session of its own (no controlling terminal: it cannot push input into qk's with TIOCSTI, nor open
// /dev/tty), then the capability bounding set, ambient set and permitted set cut to kKeptCapabilities.
// Over an overlay the command is in a user namespace of its own, so even these count only there.
Step drop_privileges();

}  // namespace qk::sandbox_exec
