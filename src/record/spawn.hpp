// Starting a command: looked up in PATH by the parent, started directly inside a cgroup
// (clone3 CLONE_INTO_CGROUP, so even its first exec is attributed), its exec failure reported back.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "qk/record/recorder.hpp"
#include "qk/util/result.hpp"

namespace qk::record {

// argv[0] as exec would find it: itself when it has a '/', else the first executable in PATH.
Result<std::string> find_program(const std::string& name, const std::string& cwd);

struct SpawnRequest {
    std::string program;            // the file to execute (see find_program); argv[0] when empty
    std::vector<std::string> argv;
    std::string cwd;
    int cgroup_fd = -1;  // start inside this cgroup, if >= 0
};

// Starts the process. An Error when it could not be started or its exec failed (with errno).
Result<pid_t> spawn(const SpawnRequest& req);

// Waits for a child started by spawn().
ExitStatus wait_exit(pid_t pid);

// A wait(2) status as an ExitStatus.
ExitStatus exit_status_of(int wait_status);

// The exit status a shell would report: the code, or 128 + the signal.
inline int shell_status(const ExitStatus& s) { return s.signal ? 128 + s.signal : s.code; }

}  // namespace qk::record
