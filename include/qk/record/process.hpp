// Starting a command: looked up in PATH by the parent, started directly inside a cgroup
// (clone3 CLONE_INTO_CGROUP, so even its first exec is attributed), its exec failure reported back.
// The child starts clean, as posix_spawn with POSIX_SPAWN_SETSIGMASK | SETSIGDEF would leave it: no
// blocked or ignored signal, and no fd but 0, 1 and 2.
#pragma once

#include <sys/types.h>

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
    bool own_process_group = false;  // setpgid(0, 0) before exec
};

// Starts the process. An Error when it could not be started or its exec failed (with errno).
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

// Calls a Command's on_start when constructed and its on_finish when closed (or destroyed), so that
// every path out of a recorder after the command started keeps the pair.
class StopWindow {
public:
    StopWindow(const Command& cmd, StopFn stop) : cmd_(cmd)
    {
        if (cmd_.on_start)
            cmd_.on_start(std::move(stop));
    }
    StopWindow(const StopWindow&) = delete;
    StopWindow& operator=(const StopWindow&) = delete;
    ~StopWindow() { close(); }

    void close()
    {
        if (open_ && cmd_.on_finish)
            cmd_.on_finish();
        open_ = false;
    }

private:
    const Command& cmd_;
    bool open_ = true;
};

}  // namespace qk::record
