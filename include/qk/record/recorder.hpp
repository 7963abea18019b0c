// Recorder: runs a command in a cgroup of its own and records every file it and its children touch.
// Engines: eBPF (src/record/ebpf_*), strace (src/record/strace_*), replay (recorded events, for tests).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qk/record/recording.hpp"
#include "qk/util/result.hpp"
#include "qk/util/settings.hpp"

namespace qk::record {

// Stops a running command: SIGTERM to every process of it (force = false) or SIGKILL (force = true).
using StopFn = std::function<void(bool force)>;

struct SpawnRequest;
struct ForeignProcess;
// Starts a command as another's child instead of this process's (qk/record/process.hpp says what it must do).
using Starter = std::function<Result<ForeignProcess>(const SpawnRequest&)>;

struct Command {
    // argv[0] is looked up in the PATH of `env` (this process's PATH when `env` is empty) when it has
    // no '/'.
    std::vector<std::string> argv;
    std::string cwd;  // absolute
    // The complete environment, "K=V" each; empty: this process's environment.
    std::vector<std::string> env;
    // When >= 0, the command's stdout and stderr both go here and its stdin is /dev/null; when -1 it
    // inherits all three. No other fd reaches the command, whatever lacks O_CLOEXEC. Under strace,
    // strace's own complaint that it cannot exec the program goes there too (see StraceRecorder).
    int output_fd = -1;
    // Start it in a process group of its own, so that a terminal's Ctrl-C reaches only us (we then stop
    // it through on_start's function). Under strace the group is strace's, which the command joins.
    bool own_process_group = false;
    // False: failed lookups (ENOENT opens and execs) are not recorded (no `probed` paths). The audit
    // judges only reads and writes, and tools probe far more paths than they open; the eBPF engine
    // then skips them in the kernel, before any path is walked.
    bool record_probes = true;
    // True: open-family calls, execs and changes (rename, unlink, rmdir, mkdir, link, symlink, mknod,
    // truncate) refused with EACCES or EPERM are recorded as kDenied (see recording.hpp for what the
    // path means). Enforce asks for them, to name what Landlock refused; the audit does not. The eBPF engine keeps those failures in the kernel only when asked:
    // every other failure is dropped before any path is walked, as before.
    bool record_denials = false;
    // True: no success is recorded (no read, write, creation or removal; the processes still are),
    // only those refusals, and the probes when record_probes asks. Enforce judges writes by its
    // overlay's upper layer and needs only what it refused: what Landlock refused, and, over a read
    // mask, the opens that found nothing where the mask hides a file. The eBPF engine then drops every
    // success in the kernel, before any path walk; strace still traces everything (its parser follows
    // cwd and processes through successes) and the recording keeps only the failures.
    bool record_only_denials = false;
    // True: a stat, statx, access or faccessat is recorded when it failed as an open would be: with
    // record_probes, one that found nothing is a probe; with record_denials, one refused (EACCES) is a
    // denial. Enforce over a read mask asks for the refusals: a file the task may not read stands there
    // unreadable, and a tool that checks before it opens (test -r, access(R_OK)) may go on without it, so
    // the look is the only trace of what it was refused.
    bool record_lookups = false;
    // When set, the command is started by it instead of by this process (enforce's run-wide helper forks
    // each command's); the eBPF engine takes it, strace (whose tracer must be the command's parent) and
    // replay start the command line themselves, which must then do the same.
    Starter start;
    // Called once the command runs, on the thread calling record(), with the function that stops it.
    // That function may be called from any thread until on_finish returns, and never after.
    std::function<void(StopFn stop)> on_start;
    // Called once the command's root process has exited, before anything of it is reaped or its cgroup
    // removed. on_start and on_finish are both called, or neither (when the command could not start;
    // under strace, whose child finds out, an Error may still follow both). Neither may throw.
    std::function<void()> on_finish;
};

struct ExitStatus {
    int code = 0;    // when signal == 0
    int signal = 0;  // the signal that killed the command, or 0
};

struct Trace {
    std::string recorder;  // "ebpf", "strace", "replay"
    ExitStatus status;
    Recording recording;
    int leftovers_killed = 0;  // processes still in the cgroup when the command exited
    // Wall time from starting the command to its exit: what the command itself took, recorded, without
    // the recorder's own work before and after it (QK_TRACE_TIMINGS shows the rest).
    std::chrono::steady_clock::duration ran{};
};

class Recorder {
public:
    virtual ~Recorder() = default;
    virtual std::string_view name() const = 0;
    // Whether record() starts a Command through its `start` when it has one (the eBPF engine); the others
    // run its command line themselves.
    virtual bool takes_starter() const { return false; }
    // Runs `cmd` to completion and returns what it did. Safe to call from several threads at once.
    // An Error means the command could not be run at all (it does not exist, cannot be spawned).
    virtual Result<Trace> record(const Command& cmd) = 0;
};

enum class RecorderChoice { automatic, ebpf, strace };

// Parses "auto", "ebpf", "strace".
Result<RecorderChoice> parse_recorder_choice(std::string_view text);

// The recorder `choice` asks for. Automatic ("auto"): eBPF where it loads, else strace, else none (nullptr)
// and `why_none` says why; when auto takes strace, `why_not_ebpf` says why eBPF could not record. A
// recorder named explicitly that cannot record is an Error. `settings`: the eBPF recorder's ring and switches.
Result<std::unique_ptr<Recorder>> make_recorder(RecorderChoice choice, const RecorderSettings& settings,
                                                std::string* why_none = nullptr, std::string* why_not_ebpf = nullptr);

}  // namespace qk::record
