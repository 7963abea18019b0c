// The Landlock ABI the running kernel offers: what enforce gives its rules in (qk-sandbox-exec), and what
// every report's provenance names (handed to the report by the sandbox: sandbox::machine_landlock_abi).
// Linux's: asked here, in the component that owns Landlock, not in util (docs/CODING.md, "Platforms").
#pragma once

namespace qk::enforce {

// 0 without Landlock (not built, disabled at boot, or refused by a seccomp filter); `why` gets the errno
// then.
int landlock_abi(int* why = nullptr);

}  // namespace qk::enforce
