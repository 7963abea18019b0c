// TaskCgroup: a cgroup v2 of its own for one traced command. The recorder filters events by it, the
// command is started inside it, and whatever the command leaves running is killed through it. RAII:
// destroying it kills what is left and removes the directory, so a run leaves no cgroup behind.
// Linux's, and the one seam to cgroups (docs/CODING.md, "Platforms"): every cgroup file is in
// cgroup_linux.cpp behind this header; spawning (process.cpp) starts a command in one through util's
// fork_into_cgroup (qk/util/fork_into_cgroup.hpp, which the sandbox helper uses too); the runner and cli
// reach them through the Launcher's header (stop_leftover_commands, stop_all_commands,
// check_command_groups), which this file implements on Linux.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::record {

// Where the cgroup2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid
// layout), from /proc/self/mountinfo.
Result<std::string> cgroup2_mount();

// Kills every process in every TaskCgroup this process has alive: stop_all_commands
// (qk/record/launcher.hpp) on Linux. Safe from any thread.
void kill_all_task_cgroups();

// Kills and removes the task cgroups no living qk holds (decided by the owner's lock, never by a pid): what
// stop_leftover_commands (qk/record/launcher.hpp) does on Linux, where a LeftoverReport's groups are task
// cgroups whose owner is gone (a qk killed outright whose guardian had no time to remove them, or was
// killed too).
struct LeftoverReport;
LeftoverReport reap_stale_task_cgroups();

class TaskCgroup {
public:
    // Creates <mount>/qk/<label>-<random>, locked by this process while it lives, and registers it with
    // the guardian. The first call also reaps cgroups left by a qk that was killed outright.
    static Result<TaskCgroup> create(std::string_view label);

    TaskCgroup(TaskCgroup&&) noexcept;
    TaskCgroup& operator=(TaskCgroup&&) noexcept;
    ~TaskCgroup();

    std::uint64_t id() const { return id_; }
    int level() const { return level_; }  // depth below the hierarchy's root: what BPF's ancestor id takes
    int fd() const { return dir_.get(); }
    const std::string& path() const { return path_; }

    // Processes in it (and below it) now.
    int count_processes() const;
    std::vector<pid_t> pids() const;
    // Sends `sig` to every process in it (and below it) but `except` (0: none); returns how many it
    // signalled. Stopping a command goes through here, not its process group, which a process may leave.
    int signal_all(int sig, pid_t except = 0);
    // Kills everything in it; returns how many processes there were.
    int kill_all();
    // Waits until no process is left in it.
    Status wait_empty(std::chrono::milliseconds timeout);

private:
    TaskCgroup() = default;
    void destroy();

    std::string path_;
    UniqueFd dir_;
    std::uint64_t id_ = 0;
    int level_ = 0;
};

}  // namespace qk::record
