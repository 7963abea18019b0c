#include "strace_recorder.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <thread>

#include <fmt/core.h>

#include "qk/record/recording_sink.hpp"
#include "qk/util/subprocess.hpp"
#include "qk/util/unique_fd.hpp"
#include "qk/record/cgroup.hpp"
#include "qk/record/process.hpp"
#include "stop_window.hpp"
#include "strace_output.hpp"
#include "strace_parser.hpp"

extern char** environ;

namespace qk::record {
namespace {

// -y names the file behind every fd (and the cwd at AT_FDCWD); -X raw prints flags as numbers, exactly
// the bits the kernel got; -s 4096 keeps argv strings whole (paths are never cut below PATH_MAX);
// -q drops attach messages but keeps "+++ exited with N +++", which -qq would drop.
std::vector<std::string> strace_options(bool seccomp_bpf, bool raw_constants, bool lookups = false,
                                        bool pid_namespaces = false)
{
    std::vector<std::string> args = {"-f", "-q", "-y", "-s", "4096"};
    // A task in a PID namespace of its own (enforce's): the pid a fork returns there comes with the pid
    // strace names the child's lines by (strace 5.9), so that they meet their parent. Only asked where
    // such a namespace is made, as its lookups cost each call that prints a pid.
    if (pid_namespaces)
        args.push_back("--pidns-translation");
    if (seccomp_bpf)
        args.push_back("--seccomp-bpf");
    if (raw_constants) {
        args.push_back("-X");
        args.push_back("raw");
    }
    args.push_back("-e");
    args.push_back("trace=" + std::string(StraceParser::traced_syscalls(lookups)));
    return args;
}

// Whether strace, given the environment `env` (empty: ours), finds a program in a PATH: it searches
// only a PATH that is set and not empty, where exec would fall back to a default.
bool strace_searches_path(const std::vector<std::string>& env)
{
    if (env.empty()) {
        const char* ours = std::getenv("PATH");
        return ours && *ours;
    }
    for (const auto& kv : env)
        if (kv.starts_with("PATH="))
            return kv.size() > 5;
    return false;
}

// What exec would refuse with EACCES, checked before strace's child tries and says so on the
// command's stderr.
Status check_runnable(const std::string& program, const Command& cmd)
{
    std::string full = program.front() == '/' ? program : cmd.cwd + "/" + program;
    struct stat st {};
    if (::stat(full.c_str(), &st) != 0)
        return sys_error(fmt::format("cannot run '{}'", cmd.argv[0]));
    if (!S_ISREG(st.st_mode) || ::access(full.c_str(), X_OK) != 0)
        return sys_error(fmt::format("cannot run '{}'", cmd.argv[0]), EACCES);
    return {};
}

// Stops the traced command. strace itself is spared a SIGTERM (it ignores it anyway, when tracing a
// program with -o, but it must live on to see the command end and report it). SIGKILL takes strace
// too: a forced stop waits for nothing.
void stop_traced(TaskCgroup* cgroup, pid_t strace, bool own_group, bool force)
{
    if (cgroup) {
        if (force)
            cgroup->kill_all();
        else
            cgroup->signal_all(SIGTERM, strace);
        return;
    }
    // No cgroup: what strace traces is the command, wherever it went.
    for (pid_t pid : tracees_of(strace))
        ::kill(pid, force ? SIGKILL : SIGTERM);
    if (force && own_group)
        ::kill(-strace, SIGKILL);
}

}  // namespace

Result<std::unique_ptr<StraceRecorder>> StraceRecorder::create()
{
    auto strace = find_program("strace", "/");
    if (!strace)
        return error("strace is not installed (on Debian: apt-get install strace)");
    QK_TRY(version, qk::run_captured({*strace, "-V"}));
    if (version->wait_status != 0 || version->out.find("strace -- version") == std::string::npos)
        return error(fmt::format("{} -V did not print a strace version: {}", *strace, version->out));
    auto true_program = find_program("true", "/");
    if (!true_program)
        return error("cannot find 'true' in PATH to check that strace can trace");

    std::unique_ptr<StraceRecorder> recorder(new StraceRecorder());
    recorder->strace_ = *strace;
    // Older strace has no -X; the parser reads symbolic flags too.
    std::string why;
    for (bool raw : {true, false}) {
        std::vector<std::string> argv = {*strace};
        for (auto& o : strace_options(false, raw))
            argv.push_back(o);
        for (const char* a : {"-o", "/dev/null", "--"})
            argv.push_back(a);
        argv.push_back(*true_program);
        QK_TRY(probe, qk::run_captured(argv));
        if (probe->wait_status == 0) {
            recorder->raw_constants_ = raw;
            why.clear();
            break;
        }
        why = probe->out;
    }
    if (!why.empty())
        return error(fmt::format("strace cannot trace here (it needs ptrace: root, or CAP_SYS_PTRACE and a "
                                 "permissive kernel.yama.ptrace_scope): {}",
                                 why));
    // --seccomp-bpf only stops the tracees at the traced calls: a large speed-up, where the kernel and
    // strace allow it. When they do not, strace says so and traces without it.
    std::vector<std::string> argv = {*strace};
    for (auto& o : strace_options(true, recorder->raw_constants_))
        argv.push_back(o);
    for (const char* a : {"-o", "/dev/null", "--"})
        argv.push_back(a);
    argv.push_back(*true_program);
    auto probe = qk::run_captured(argv);
    recorder->seccomp_bpf_ = probe && probe->wait_status == 0 && probe->out.empty();
    return recorder;
}

Result<Trace> StraceRecorder::record(const Command& cmd)
{
    if (cmd.argv.empty())
        return error("no command given");
    std::optional<std::string> path = command_path(cmd.env);
    QK_TRY(program, find_program(cmd.argv[0], cmd.cwd, path));
    // strace's own "exec: Permission denied" would land in the command's output: say it here instead.
    QK_TRY_STATUS(check_runnable(*program, cmd));
    QK_TRY(fifo, StraceOutputFifo::create());
    // Without a cgroup, leftovers are still found: strace -f follows every process the command starts.
    std::optional<TaskCgroup> cgroup;
    if (auto cg = TaskCgroup::create("trace"))
        cgroup.emplace(std::move(cg).value());

    SpawnRequest req;
    req.argv = {strace_};
    // Denials are recorded under enforce alone, which runs the task in a PID namespace. An strace with
    // -X raw (5.15) has --pidns-translation (5.9): no probe of its own. An older one names no process
    // under enforce, as the parser then cannot tie a child to its parent.
    for (auto& o : strace_options(seccomp_bpf_, raw_constants_, cmd.record_lookups && (cmd.record_probes || cmd.record_denials),
                                  cmd.record_denials && raw_constants_))
        req.argv.push_back(std::move(o));
    for (const std::string& a : {std::string("-o"), fifo->path(), std::string("--")})
        req.argv.push_back(a);
    // strace looks argv[0] up in the PATH of its environment, the command's, itself (find_program above
    // only reports a missing command): the command keeps the argv[0] it was given, as under the eBPF
    // engine. Where that PATH is unset strace would find nothing, so it gets the program found.
    req.argv.insert(req.argv.end(), cmd.argv.begin(), cmd.argv.end());
    if (!strace_searches_path(cmd.env))
        req.argv[req.argv.size() - cmd.argv.size()] = *program;
    req.program = strace_;
    req.cwd = cmd.cwd;
    req.cgroup_fd = cgroup ? cgroup->fd() : -1;
    // strace passes on its environment, stdio and process group: the command's. Its own messages go to
    // the same stderr; with -o and -q it prints none unless the command cannot be run at all.
    req.env = cmd.env;
    req.output_fd = cmd.output_fd;
    req.own_process_group = cmd.own_process_group;

    Trace trace;
    trace.recorder = "strace";
    RecordingSink sink(trace.recording, cmd);
    StraceParser parser(sink, cmd.cwd);
    const auto started = std::chrono::steady_clock::now();
    auto pid = spawn(req);
    if (!pid)
        return with_message(pid.error(), "cannot start strace: " + pid.error().message);

    StraceOutputReader reader(parser, cgroup ? &*cgroup : nullptr, *pid);
    std::thread reading([&reader, fd = fifo->read_fd()] { reader.run(fd); });
    {
        // Until the command's first process exists, a stop would find nothing to signal: wait for it
        // (strace prints a line per call, so within milliseconds) or for strace to give up.
        reader.wait_root_started();
        StopWindow window(cmd, [cg = cgroup ? &*cgroup : nullptr, strace = *pid,
                                group = cmd.own_process_group](bool force) { stop_traced(cg, strace, group, force); });
        // strace exits once every process it traces has: the command's root and what it left.
        wait_exited_unreaped(*pid);
    }
    trace.ran = std::chrono::steady_clock::now() - started;
    ExitStatus strace_status = wait_exit(*pid);
    fifo->release_hold();
    reading.join();

    // The command could not be run at all, as spawn() reports it under the other engines.
    if (auto err = parser.root_exec_failure())
        return sys_error(fmt::format("cannot run '{}'", cmd.argv[0]), *err);
    Recording& rec = trace.recording;
    trace.leftovers_killed = reader.killed();
    if (cgroup && cgroup->count_processes() > 0) {
        trace.leftovers_killed += cgroup->kill_all();
        if (auto s = cgroup->wait_empty(std::chrono::seconds(10)); !s)
            rec.mark_incomplete(s.error().message);
    }
    if (reader.first_error()) {
        std::string more = reader.errors() > 1 ? fmt::format(" (and {} more lines)", reader.errors() - 1) : "";
        rec.mark_incomplete(reader.first_error()->message + more);
    }
    // strace exits with the command's status, but the root's own exit line is the command's word.
    if (auto status = parser.root_wait_status()) {
        trace.status = exit_status_of(*status);
    } else {
        trace.status = strace_status;
        rec.mark_incomplete(parser.root_pid() ? "strace did not report how the command exited"
                                              : "strace recorded nothing: it could not run the command");
    }
    if (parser.root_pid()) {
        // The command's parent is strace, an artefact of this engine: report it as ours, like eBPF.
        Process& root = rec.process(parser.root_pid());
        root.ppid = ::getpid();
        root.signal.reset();
        root.exit_code.reset();
        if (trace.status.signal)
            root.signal = trace.status.signal;
        else
            root.exit_code = trace.status.code;
    }
    return trace;
}

}  // namespace qk::record
