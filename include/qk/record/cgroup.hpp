// TaskCgroup: a cgroup v2 of its own for one traced command. The recorder filters events by it, the
// command is started inside it, and whatever the command leaves running is killed through it. RAII:
// destroying it kills what is left and removes the directory, so a run leaves no cgroup behind.
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

// Kills every process in every TaskCgroup this process has alive, for an interrupted run: the
// commands die, their recorders see them exit and finish as usual. Safe from any thread.
void kill_all_task_cgroups();

// What reap_stale_task_cgroups() found: task cgroups whose owner is gone (a qk killed outright whose
// guardian had no time to remove them, or was killed too), emptied and removed; the processes that still
// ran in them, killed (none when the guardian did its work); and the cgroups whose processes would not die.
struct ReapReport {
    int removed = 0;
    int killed = 0;
    std::vector<std::string> still_running;
};

// Kills and removes the task cgroups no living qk holds (decided by the owner's lock, never by a pid).
// Every run calls it before its first task: a task left running by a killed run may still be writing
// into outputs this run would store.
ReapReport reap_stale_task_cgroups();

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
