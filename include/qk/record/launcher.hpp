// Launcher: starts one command and waits for it. The runner goes through it so that the sandbox's
// launchers (src/sandbox: recording each command in a cgroup, or running it through qk-sandbox-exec) can
// take the place of the plain ProcessLauncher.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "qk/record/recorder.hpp"
#include "qk/util/result.hpp"

namespace qk::record {

struct LaunchRequest {
    std::vector<std::string> argv;  // argv[0] is looked up in the PATH of `env` when it has no '/'
    std::string cwd;                // absolute
    std::vector<std::string> env;   // "K=V", the complete environment
    int output_fd = -1;             // stdout and stderr both go here; stdin is /dev/null
    // When set, a launcher that records may start the command through it (Command::start); every launcher
    // may also run `argv` itself, which must do the same.
    Starter start;
};

// Lets one thread stop the commands others are waiting for. A launcher registers how to stop its
// command for as long as it runs; the first cancel() asks gently (SIGTERM), each later one forcefully.
class CancelToken {
public:
    // How to stop one running command; `force` is false the first time, true after.
    using StopFn = std::function<void(bool force)>;

    // Registered while it lives; after its destructor returns, its StopFn is never called again, so
    // the launcher may reap the process.
    class Watch {
    public:
        Watch(Watch&& o) noexcept;
        Watch& operator=(Watch&&) = delete;
        ~Watch();

    private:
        friend class CancelToken;
        Watch(CancelToken* token, std::size_t id) : token_(token), id_(id) {}
        CancelToken* token_;
        std::size_t id_;
    };

    void cancel();
    bool cancelled() const;
    // Registers `stop` for a command that has started. When the token is already cancelled, `stop` is
    // called at once, so a command started in the middle of a cancel is not missed.
    [[nodiscard]] Watch watch(StopFn stop);

private:
    mutable std::mutex mutex_;
    int requests_ = 0;
    std::size_t next_id_ = 0;
    std::map<std::size_t, StopFn> stops_;
};

class Launcher {
public:
    virtual ~Launcher() = default;
    // Starts the command and waits for it to exit. Safe to call from several threads at once. An Error
    // when it could not start (no such program, no such directory) or the token was already cancelled.
    virtual Result<ExitStatus> run(const LaunchRequest& request, CancelToken& cancel) = 0;
};

// What stop_leftover_commands() found: the groups of an earlier qk's commands (on Linux, task cgroups)
// whose owner is gone, emptied and removed; the processes that still ran in them, killed (none when the
// guardian did its work); and the groups whose processes would not die.
struct LeftoverReport {
    int removed = 0;
    int killed = 0;
    std::vector<std::string> still_running;
};

// Kills what a qk killed outright left running, found by its owner's lock, never by a pid. Every run calls
// it before its first task: a task left running by a killed run may still be writing into outputs this
// run would store. The runner's one way to the platform's process groups (record/cgroup.hpp on Linux).
LeftoverReport stop_leftover_commands();

// Kills every command this process's launchers started that still runs (on Linux, everything in its task
// cgroups), for an interrupted run: the commands die, their recorders see them exit and finish as usual.
// Safe from any thread.
void stop_all_commands();

// For qk doctor: whether a command can be given a group of its own here, as the recorders give each (on
// Linux, a cgroup v2 made and removed: mounted is not enough), and what to do when not. A second
// platform's launcher answers for its own groups.
struct CommandGroupsCheck {
    std::string name;     // "cgroup2"
    bool ok = false;
    std::string verdict;  // where they are and that one can be made, or why not
    std::string fix;      // what to do when not ok
};
CommandGroupsCheck check_command_groups();

// What to do when a recorder could not make a command's group because the platform's groups are read-only
// (EROFS: a container's cgroup filesystem mounted read-only).
const char* read_only_groups_fix();

// posix_spawn in a process group of its own, so that cancelling reaches the command's children too.
// Only fds 0, 1 and 2 reach the command.
class ProcessLauncher final : public Launcher {
public:
    Result<ExitStatus> run(const LaunchRequest& request, CancelToken& cancel) override;
};

}  // namespace qk::record
