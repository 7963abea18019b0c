// What the command gives up before it runs: the terminal qk runs in, and every capability but those a
// tool needs to work with files it may reach anyway.
#pragma once

#include "qk/util/capabilities.hpp"
#include "setup_error.hpp"

namespace qk::sandbox_exec {

// No controlling terminal (TIOCNOTTY, staying in qk's process group): it cannot push input into the
// terminal qk runs in with TIOCSTI, nor open /dev/tty. Then the capability bounding set, ambient set and permitted set cut to kKeptCapabilities.
// Over an overlay the command is in a user namespace of its own, so even these count only there.
// `keep_dac`: false where the read mask's stand-ins are owned by an id the command's namespace maps (built
// inside it: qk as root without CAP_SYS_ADMIN), so that their mode 000 refuses root too: CAP_DAC_OVERRIDE
// and CAP_DAC_READ_SEARCH go as well.
Step drop_privileges(bool keep_dac = true);

using qk::has_capability;

}  // namespace qk::sandbox_exec
