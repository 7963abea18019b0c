// A child started inside a cgroup v2 (clone3 CLONE_INTO_CGROUP), so that even its first exec is the
// cgroup's: the one copy of that fork, for record's spawn and for the run's sandbox helper
// (qk-sandbox-exec --serve), which forks each command's helper into the task's cgroup qk hands it. The
// cgroup itself (made, killed, removed) is record's (qk/record/cgroup.hpp).
#pragma once

#include <sys/types.h>

namespace qk {

// Starts a child inside the cgroup `cgroup_fd`: as fork, the child's pid to the parent and 0 to the child,
// -1 with errno on an error. On a kernel without it, a plain fork with `join_in_child` set: the child must
// join_cgroup before it does anything the cgroup should see.
pid_t fork_into_cgroup(int cgroup_fd, bool& join_in_child);

// In a child between fork and exec (async-signal-safe): moves it into the cgroup `cgroup_fd`. False, with
// errno set, when it could not.
bool join_cgroup(int cgroup_fd);

}  // namespace qk
