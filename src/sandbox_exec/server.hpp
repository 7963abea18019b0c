// The run's one helper, `qk-sandbox-exec --serve`: it forks each command's helper from itself, into the
// task's cgroup qk hands it, where qk forked and exec'd a new qk-sandbox-exec for every command (that exec
// and its start were about a third of what enforce adds to a command: docs/benchmarks.md, "One helper for
// the run"). Each child then runs exactly as a helper exec'd with the same command line, from a process that
// holds nothing of any other command. The channel's protocol is qk/enforce/served_command.hpp.
#pragma once

#include <string>
#include <vector>

namespace qk::sandbox_exec {

// What a child does with its command line (PLAN -- PROGRAM ARGS..., without qk-sandbox-exec itself):
// qk-sandbox-exec's own main, returning its exit status.
using CommandLine = int (*)(const std::vector<std::string>& args);

// Serves the requests qk sends on `channel` (a SOCK_SEQPACKET socket: one message a command, with its
// socket and its cgroup) until qk closes it or is gone; returns the exit status. Single-threaded, as each
// child's user namespace needs.
int serve(int channel, CommandLine run);

}  // namespace qk::sandbox_exec
