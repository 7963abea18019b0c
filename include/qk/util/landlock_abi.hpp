// The Landlock ABI the running kernel offers: what enforce gives its rules in, and what every report's
// provenance names.
#pragma once

namespace qk {

// 0 without Landlock (not built, disabled at boot, or refused by a seccomp filter); `why` gets the errno
// then.
int landlock_abi(int* why = nullptr);

}  // namespace qk
