// The guardian: a small process that outlives qk only to kill what qk started. SIGKILL (an OOM kill,
// `timeout -s KILL`, a CI runner stopping the step) gives qk no chance to clean up, and a task's
// processes that live on keep writing into outputs that the next run stores in its cache.
//
// qk registers each task's process group and cgroup with it over a socket whose other end only qk
// holds; when that end closes (qk is gone, however it ended) the guardian kills every group and cgroup
// still registered, removes each cgroup once it is empty (within a few seconds), then exits. Started on
// first use; a run that cannot start it goes on, and `guardian_status()` says why, for the run to report.
#pragma once

#include <sys/types.h>

#include <string>

#include "qk/util/result.hpp"

namespace qk::record::guardian {

// A task's process group (its leader's pid), from spawn until it has been reaped.
void watch_process_group(pid_t pgid);
void forget_process_group(pid_t pgid);

// A task's cgroup directory, from its creation until it is empty and removed. An Error when the
// guardian could not hold it (its tables are static, forked from a threaded qk: 512 cgroups at once, a
// path under 512 bytes): a task whose cgroup nothing would kill if qk died must not run.
Status watch_cgroup(const std::string& path);
void forget_cgroup(const std::string& path);

// Empty when the guardian runs (or was never needed), else why it could not be started.
std::string guardian_status();

}  // namespace qk::record::guardian
