// What the command gives up before it runs: the terminal qk runs in, and every capability but those a
// tool needs to work with files it may reach anyway.
#pragma once

#include "setup_error.hpp"

namespace qk::sandbox_exec {

// No controlling terminal (TIOCNOTTY, staying in qk's process group): it cannot push input into the
// terminal qk runs in with TIOCSTI, nor open /dev/tty. Then the capability bounding set, ambient set and permitted set cut to kKeptCapabilities.
// Over an overlay the command is in a user namespace of its own, so even these count only there.
Step drop_privileges();

}  // namespace qk::sandbox_exec
