#include "ebpf_recorder.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <fmt/core.h>

#include "qk/record/cgroup.hpp"
#include "qk/record/process.hpp"
#include "stop_window.hpp"

namespace qk::record {

Result<std::unique_ptr<EbpfRecorder>> EbpfRecorder::create(const RecorderSettings& settings)
{
    EbpfOptions options;
    if (settings.ring_bytes)
        options.ring_bytes = *settings.ring_bytes;
    // False: as on a kernel without io_uring's tracepoint (tests of that path set it).
    options.io_uring = settings.io_uring_tracepoint;
    options.debug = settings.debug_bpf;
    // Probe the cgroup side first: without it nothing could be attributed.
    QK_TRY(mount, cgroup2_mount());
    // A cgroup made and removed: where cgroupfs is read-only (a default container) loading would
    // succeed and every task then fail to get the cgroup it is attributed by; auto takes strace instead.
    if (auto probe = TaskCgroup::create("probe"); !probe)
        return probe.error();
    QK_TRY(session, EbpfSession::open(options));
    return std::unique_ptr<EbpfRecorder>(new EbpfRecorder(std::move(session).value()));
}

Result<Trace> EbpfRecorder::record(const Command& cmd)
{
    if (cmd.argv.empty())
        return error("no command given");
    QK_TRY(program, find_program(cmd.argv[0], cmd.cwd, command_path(cmd.env)));
    QK_TRY(cgroup, TaskCgroup::create("trace"));

    Trace trace;
    trace.recorder = "ebpf";
    RecordingSink sink(trace.recording, cmd);
    QK_TRY_STATUS(session_->track(cgroup->id(), cgroup->level(), &sink, {cmd.record_probes, cmd.record_denials, cmd.record_only_denials, cmd.record_lookups}));
    const auto started = std::chrono::steady_clock::now();
    const SpawnRequest request{*program, cmd.argv, cmd.cwd, cgroup->fd(), cmd.env, cmd.output_fd, -1,
                               cmd.own_process_group};
    // Started here, or by the command's starter (enforce's run-wide helper), whose child it then is.
    std::optional<ForeignProcess> foreign;
    Result<pid_t> pid = -1;
    if (cmd.start) {
        auto launched = cmd.start(request);
        pid = launched ? Result<pid_t>(launched->pid) : Result<pid_t>(launched.error());
        if (launched)
            foreign = std::move(*launched);
    } else {
        pid = spawn(request);
    }
    if (!pid) {
        session_->untrack(cgroup->id());
        return pid.error();
    }
    std::optional<Error> lost;  // the starter could not say how it ended: the command is killed, and an Error
    {
        // Through the cgroup, not the process group: a process may leave its group, not its cgroup.
        StopWindow window(cmd, [cg = &*cgroup](bool force) { cg->signal_all(force ? SIGKILL : SIGTERM); });
        if (foreign) {
            auto ended = foreign->wait();
            if (ended)
                trace.status = *ended;
            else
                lost = ended.error();
        } else {
            wait_exited_unreaped(*pid);
        }
    }
    trace.ran = std::chrono::steady_clock::now() - started;
    if (!foreign)
        trace.status = wait_exit(*pid);
    trace.leftovers_killed = cgroup->kill_all();
    if (auto s = cgroup->wait_empty(std::chrono::seconds(10)); !s)
        trace.recording.mark_incomplete(s.error().message);
    // What left the cgroup was followed all along: it ends with the command all the same.
    trace.leftovers_killed += session_->kill_followed(cgroup->id(), std::chrono::seconds(10));

    qk_task_stats stats = session_->untrack(cgroup->id());
    if (lost)
        return *lost;
    Recording& rec = trace.recording;
    rec.add_lost_events(stats.lost);
    if (stats.lost)
        rec.mark_incomplete(fmt::format("{} events were lost: the ring buffer ({} bytes) was full", stats.lost,
                                        session_->ring_bytes()));
    if (stats.unfollowed)
        rec.mark_incomplete(fmt::format("{} processes could not be followed: the recorder's process table was full",
                                        stats.unfollowed));
    if (stats.compat)
        rec.mark_incomplete(fmt::format("{} 32-bit system calls were made, which the recorder does not decode",
                                        stats.compat));
    if (stats.io_uring_fs)
        rec.mark_incomplete(fmt::format(
            "{} file operations were submitted through io_uring, which the recorder does not decode", stats.io_uring_fs));
    if (stats.io_uring_refused)
        rec.add_refused_call("io_uring_setup");
    if (stats.io_uring_unseen)
        rec.mark_incomplete(fmt::format("{} io_uring instance{} set up, and this kernel's io_uring tracepoint could not be "
                                        "attached to see what {}",
                                        stats.io_uring_unseen, stats.io_uring_unseen == 1 ? " was" : "s were",
                                        stats.io_uring_unseen == 1 ? "it does" : "they do"));

    // The command's own process was forked by us, outside the cgroup: no fork record names it.
    Process& root = rec.process(*pid);
    root.ppid = ::getpid();
    if (trace.status.signal) {
        root.signal = trace.status.signal;
        root.exit_code.reset();
    } else {
        root.exit_code = trace.status.code;
        root.signal.reset();
    }
    return trace;
}

}  // namespace qk::record
