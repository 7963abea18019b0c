// The sandboxed side of one command: pid 1 of its pid namespace (over an overlay) and the command itself,
// which tell the supervisor (supervisor.cpp) what happened through a pipe, one message a line:
// "setup\tSTAGE\tERRNO\tMSG", "rules\tABI\tADDED\tMISSING", "status\tWAITSTATUS".
#pragma once

#include <signal.h>

#include <cstdint>
#include <string>
#include <vector>

#include "qk/enforce/sandbox_plan.hpp"
#include "setup_error.hpp"

namespace qk::sandbox_exec {

// The signals the supervisor takes and forwards to the command, which gets them back at their defaults.
inline constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

// What the supervisor hands the sandboxed side besides the plan.
struct CommandSide {
    int report = -1;  // the pipe to the supervisor
    // The read mask was built inside the command's user namespace as root (no CAP_SYS_ADMIN over the host):
    // its stand-ins' owner is mapped there, so the command gives up reading past modes.
    bool stand_ins_mapped = false;
    std::uint16_t proxy_port = 0;  // with a network list: the port on its loopback the run's proxy serves
};

void tell(int fd, const std::string& line);
void tell_setup(int fd, const SetupError& e);

// The command process: Landlock, then exec. Never returns.
[[noreturn]] void exec_command(const enforce::SandboxPlan& plan, const std::vector<std::string>& argv,
                               const CommandSide& side);

// Pid 1 of the command's pid namespace: starts the command, forwards signals to it, reaps whatever is
// orphaned to it, and when the command ends, says how and exits, which kills everything left.
[[noreturn]] void reaper(const enforce::SandboxPlan& plan, const std::vector<std::string>& argv,
                         const CommandSide& side);

}  // namespace qk::sandbox_exec
