#include "qk/record/launcher.hpp"

#include <fcntl.h>
#include <signal.h>

#include <cerrno>
#include <utility>

#include <fmt/format.h>

#include "qk/record/cgroup.hpp"
#include "qk/record/process.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::record {

// ---------------------------------------------------------------------------------------------------
// CancelToken

CancelToken::Watch::Watch(Watch&& o) noexcept : token_(std::exchange(o.token_, nullptr)), id_(o.id_) {}

CancelToken::Watch::~Watch()
{
    if (!token_)
        return;
    std::lock_guard lock(token_->mutex_);
    token_->stops_.erase(id_);
}

void CancelToken::cancel()
{
    // Stops are called under the lock so that none runs after its Watch is gone (the pid is reaped).
    std::lock_guard lock(mutex_);
    ++requests_;
    for (auto& [id, stop] : stops_)
        stop(requests_ > 1);
}

bool CancelToken::cancelled() const
{
    std::lock_guard lock(mutex_);
    return requests_ > 0;
}

CancelToken::Watch CancelToken::watch(StopFn stop)
{
    std::lock_guard lock(mutex_);
    std::size_t id = next_id_++;
    if (requests_ > 0)
        stop(requests_ > 1);
    stops_.emplace(id, std::move(stop));
    return Watch(this, id);
}

LeftoverReport stop_leftover_commands()
{
    return reap_stale_task_cgroups();
}

void stop_all_commands()
{
    kill_all_task_cgroups();
}

// ---------------------------------------------------------------------------------------------------
// ProcessLauncher

Result<ExitStatus> ProcessLauncher::run(const LaunchRequest& req, CancelToken& cancel)
{
    if (req.argv.empty())
        return error("cannot run a command: it is empty");
    if (cancel.cancelled())
        return Error{fmt::format("{} was not started: the run is being cancelled", req.argv[0]), ECANCELED,
                     ErrorKind::cancelled};
    // Looked up in the command's own PATH, not ours.
    QK_TRY(program, find_program(req.argv[0], req.cwd, command_path(req.env)));
    SpawnRequest spawn;
    spawn.program = *program;
    spawn.argv = req.argv;
    spawn.cwd = req.cwd;
    spawn.env = req.env;
    UniqueFd dev_null;  // no output fd: the output is dropped, as the command's stdin is empty
    if (req.output_fd < 0) {
        dev_null.reset(::open("/dev/null", O_WRONLY | O_CLOEXEC));
        if (!dev_null.valid())
            return sys_error("cannot open /dev/null");
    }
    spawn.output_fd = req.output_fd >= 0 ? req.output_fd : dev_null.get();
    spawn.own_process_group = true;
    QK_TRY(pid, record::spawn(spawn));
    {
        // The group is killed, not just the shell: `sh -c` leaves its children running otherwise.
        CancelToken::Watch watch = cancel.watch([pid = *pid](bool force) { ::kill(-pid, force ? SIGKILL : SIGTERM); });
        // Waits without reaping, so the pid (the group's id) cannot be reused while a stop may still
        // signal it; the Watch is gone before the reap below.
        wait_exited_unreaped(*pid);
    }
    return wait_exit(*pid);
}

}  // namespace qk::record
