// Keeping a secret qk holds (the remote cache's token) from the processes it starts: out of the
// environment they inherit, out of /proc/<qk>/environ, and, where same-uid processes would otherwise be
// allowed, out of reach of /proc/<qk>/mem and ptrace (docs/remote-cache.md).
#pragma once

#include "qk/util/result.hpp"

namespace qk {

// Removes `name` from the environment, then overwrites each entry that held it (name and value) with
// zeros. unsetenv alone drops the pointer, but the bytes stay where the kernel reads
// /proc/<pid>/environ from (the block execve laid out), readable by any process of the same user.
// Returns how many entries held it (the environment may hold a name twice). Call it before threads start:
// the environment is not guarded against concurrent readers.
unsigned forget_environment_variable(const char* name);

// prctl(PR_SET_DUMPABLE, 0): a process of the same user can no longer read this one's memory, open its
// descriptors or environment in /proc, nor ptrace it (root, with CAP_SYS_PTRACE, still can). No core
// dump either. Processes qk execs are dumpable again (execve resets it); its forks are not until they exec.
Status make_undumpable();

}  // namespace qk
