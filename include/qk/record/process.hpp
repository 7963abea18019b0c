// Starting a command, for the recorders and for the runner's plain launches alike: looked up in PATH by
// the parent, started directly inside a cgroup when asked (clone3 CLONE_INTO_CGROUP, so even its first
// exec is attributed), its exec failure reported back. The child starts clean: no blocked or ignored
// signal and, when its output is redirected, no fd but 0, 1 and 2.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "qk/record/recorder.hpp"
#include "qk/util/result.hpp"

namespace qk::record {

// The search path a command with environment `env` uses: its PATH, or a default when it has none (or
// an empty one); nullopt when `env` is empty, which stands for this process's environment.
std::optional<std::string> command_path(const std::vector<std::string>& env);

// argv[0] as exec would find it: itself when it has a '/', else the first executable in `path` (this
// process's PATH when nullopt, or a default when that is unset).
Result<std::string> find_program(const std::string& name, const std::string& cwd,
                                 const std::optional<std::string>& path = std::nullopt);

struct SpawnRequest {
    std::string program;            // the file to execute (see find_program); argv[0] when empty
    std::vector<std::string> argv;
    std::string cwd;
    int cgroup_fd = -1;  // start inside this cgroup, if >= 0
    std::vector<std::string> env;   // "K=V"; empty: this process's environment
    int output_fd = -1;             // >= 0: stdout and stderr go here, stdin is /dev/null
    int input_fd = -1;              // with output_fd, >= 3: stdin comes from here instead of /dev/null
    bool own_process_group = false;  // setpgid(0, 0) before exec
};

// A process another started on our behalf (the run's sandbox helper forks each command's helper): its pid,
// and how to wait for its end, which blocks until it has ended; an Error when that can no longer be known
// (the starter is gone). Nothing of it is ours to reap.
struct ForeignProcess {
    pid_t pid = -1;
    std::function<Result<ExitStatus>()> wait;
};
// A Starter (qk/record/recorder.hpp) starts the process spawn() would have, in the same cgroup, with the same
// fds, directory and environment, but as another's child; an Error when it could not, as spawn's.

// Why `req` could not start when its working directory could not be entered (`err`): spawn's own words,
// for a Starter to say the same.
Error cwd_error(const SpawnRequest& req, int err);

// Starts the process. An Error when it could not be started or its exec failed (with errno). Without a
// cgroup it is posix_spawn (vfork-fast, which a runner starting thousands of commands notices).
Result<pid_t> spawn(const SpawnRequest& req);

// Waits for a child started by spawn().
ExitStatus wait_exit(pid_t pid);

// Waits until a child started by spawn() has exited, without reaping it: while it is a zombie its pid
// (and process group id) cannot be reused, so it is still safe to signal.
void wait_exited_unreaped(pid_t pid);

// A wait(2) status as an ExitStatus.
ExitStatus exit_status_of(int wait_status);

// The exit status a shell would report: the code, or 128 + the signal.
inline int shell_status(const ExitStatus& s) { return s.signal ? 128 + s.signal : s.code; }

}  // namespace qk::record
