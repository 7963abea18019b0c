#include "record/strace_recorder.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <fmt/core.h>

#include "qk/record/recording_sink.hpp"
#include "qk/util/unique_fd.hpp"
#include "record/cgroup.hpp"
#include "record/spawn.hpp"
#include "record/strace_parser.hpp"

extern char** environ;

namespace qk::record {
namespace {

namespace fs = std::filesystem;

struct Captured {
    int wait_status = -1;
    std::string output;  // stdout and stderr together
};

// Runs a short probe with its output captured, so that strace's messages do not reach our stderr.
Result<Captured> run_captured(const std::vector<std::string>& argv)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return sys_error("cannot create a pipe");
    UniqueFd read_end(fds[0]), write_end(fds[1]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    int err = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err != 0)
        return sys_error(fmt::format("cannot run {}", argv[0]), err);
    write_end.reset();
    Captured out;
    char buf[4096];
    for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof(buf))) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        out.output.append(buf, static_cast<size_t>(n));
    }
    while (::waitpid(pid, &out.wait_status, 0) < 0 && errno == EINTR) {
    }
    return out;
}

// The FIFO strace writes its output to, so that it is parsed while the command runs and memory does
// not grow with the number of events. We hold a write end of our own until strace has exited: the
// reader sees EOF only then, whether strace ever opened the FIFO or not.
class OutputFifo {
public:
    static Result<OutputFifo> create()
    {
        OutputFifo f;
        std::string tmpl = (fs::temp_directory_path() / "qk-strace-XXXXXX").string();
        if (!::mkdtemp(tmpl.data()))
            return sys_error("cannot create a temporary directory for strace's output");
        f.dir_ = tmpl;
        f.path_ = tmpl + "/output";
        if (::mkfifo(f.path_.c_str(), 0600) != 0)
            return sys_error("cannot create the FIFO " + f.path_);
        f.read_.reset(::open(f.path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
        f.hold_.reset(::open(f.path_.c_str(), O_WRONLY | O_CLOEXEC));
        if (!f.read_.valid() || !f.hold_.valid() || ::fcntl(f.read_.get(), F_SETFL, 0) != 0)
            return sys_error("cannot open the FIFO " + f.path_);
        return f;
    }
    OutputFifo(OutputFifo&& o) noexcept
        : dir_(std::exchange(o.dir_, {})), path_(std::move(o.path_)), read_(std::move(o.read_)), hold_(std::move(o.hold_))
    {
    }
    ~OutputFifo()
    {
        if (!dir_.empty()) {
            ::unlink(path_.c_str());
            ::rmdir(dir_.c_str());
        }
    }
    const std::string& path() const { return path_; }
    int read_fd() const { return read_.get(); }
    void release_hold() { hold_.reset(); }

private:
    OutputFifo() = default;
    std::string dir_, path_;
    UniqueFd read_, hold_;
};

std::vector<pid_t> pids_in(const std::string& cgroup)
{
    std::vector<pid_t> pids;
    std::error_code ec;
    auto read_procs = [&pids](const fs::path& dir) {
        std::ifstream procs(dir / "cgroup.procs");
        for (pid_t pid; procs >> pid;)
            pids.push_back(pid);
    };
    read_procs(cgroup);
    for (auto it = fs::recursive_directory_iterator(cgroup, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_directory(ec))
            read_procs(it->path());
    return pids;
}

// Whether `pid` is traced by `tracer` now: without a cgroup, the parser's list of live processes may
// lag behind strace, so a pid is checked before it is killed, lest it was reused meanwhile.
bool traced_by(pid_t pid, pid_t tracer)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("TracerPid:"))
            return std::atoi(line.c_str() + 10) == tracer;
    return false;
}

// Reads strace's output into the parser. Once the command's root process has exited, what it left
// running is killed (strace itself excepted: it must live to write their ends), and again every
// 100 ms while strace still waits for tracees.
class OutputReader {
public:
    OutputReader(StraceParser& parser, const TaskCgroup* cgroup, pid_t strace_pid)
        : parser_(parser), cgroup_(cgroup), strace_pid_(strace_pid)
    {
    }

    void run(int fd)
    {
        std::string buf;
        std::size_t scanned = 0;
        char chunk[1 << 16];
        for (;;) {
            if (parser_.root_wait_status()) {
                struct pollfd p {fd, POLLIN, 0};
                if (::poll(&p, 1, 100) == 0) {
                    kill_leftovers();
                    continue;
                }
            }
            ssize_t n = ::read(fd, chunk, sizeof(chunk));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            buf.append(chunk, static_cast<std::size_t>(n));
            std::size_t start = 0;
            for (std::size_t nl; (nl = buf.find('\n', scanned)) != std::string::npos; scanned = start) {
                feed(std::string_view(buf).substr(start, nl - start));
                start = nl + 1;
            }
            buf.erase(0, start);
            scanned = buf.size();
        }
        if (!buf.empty())
            feed(buf);
        note(parser_.finish());
    }

    const std::optional<Error>& first_error() const { return first_error_; }
    int errors() const { return errors_; }
    int killed() const { return static_cast<int>(killed_.size()); }

private:
    void feed(std::string_view line)
    {
        try {
            note(parser_.feed(line));
            if (parser_.root_wait_status() && !root_ended_) {
                root_ended_ = true;
                kill_leftovers();
            }
        } catch (const std::exception& e) {
            // Keep draining whatever happens: strace blocks on a full FIFO otherwise.
            note(error(fmt::format("the strace parser failed: {}", e.what())));
        }
    }

    void note(const Status& s)
    {
        if (!s.ok() && errors_++ == 0)
            first_error_ = s.error();
    }

    void kill_leftovers()
    {
        // Rounds until one finds nobody new: a process killed while forking may leave a child.
        for (int round = 0; round < 100; round++) {
            bool any = false;
            std::vector<pid_t> pids = cgroup_ ? pids_in(cgroup_->path()) : parser_.live_processes();
            for (pid_t pid : pids) {
                if (pid == strace_pid_ || pid == parser_.root_pid() || killed_.contains(pid))
                    continue;
                if (!cgroup_ && !traced_by(pid, strace_pid_))
                    continue;
                killed_.insert(pid);
                ::kill(pid, SIGKILL);
                any = true;
            }
            if (!any || !cgroup_)
                break;
        }
    }

    StraceParser& parser_;
    const TaskCgroup* cgroup_;
    pid_t strace_pid_;
    bool root_ended_ = false;
    std::set<pid_t> killed_;
    std::optional<Error> first_error_;
    int errors_ = 0;
};

ExitStatus from_wait_status(int status)
{
    ExitStatus s;
    if (WIFSIGNALED(status))
        s.signal = WTERMSIG(status);
    else
        s.code = WEXITSTATUS(status);
    return s;
}

// -y names the file behind every fd (and the cwd at AT_FDCWD); -X raw prints flags as numbers, exactly
// the bits the kernel got; -s 4096 keeps argv strings whole (paths are never cut below PATH_MAX);
// -q drops attach messages but keeps "+++ exited with N +++", which -qq would drop.
std::vector<std::string> strace_options(bool seccomp_bpf, bool raw_constants)
{
    std::vector<std::string> args = {"-f", "-q", "-y", "-s", "4096"};
    if (seccomp_bpf)
        args.push_back("--seccomp-bpf");
    if (raw_constants) {
        args.push_back("-X");
        args.push_back("raw");
    }
    args.push_back("-e");
    args.push_back("trace=" + std::string(StraceParser::traced_syscalls()));
    return args;
}

}  // namespace

Result<std::unique_ptr<StraceRecorder>> StraceRecorder::create()
{
    auto strace = find_program("strace", "/");
    if (!strace)
        return error("strace is not installed (on Debian: apt-get install strace)");
    auto version = run_captured({*strace, "-V"});
    if (!version)
        return version.error();
    if (version->wait_status != 0 || version->output.find("strace -- version") == std::string::npos)
        return error(fmt::format("{} -V did not print a strace version: {}", *strace, version->output));
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
        auto probe = run_captured(argv);
        if (!probe)
            return probe.error();
        if (probe->wait_status == 0) {
            recorder->raw_constants_ = raw;
            why.clear();
            break;
        }
        why = probe->output;
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
    auto probe = run_captured(argv);
    recorder->seccomp_bpf_ = probe && probe->wait_status == 0 && probe->output.empty();
    return recorder;
}

Result<Trace> StraceRecorder::record(const Command& cmd)
{
    if (cmd.argv.empty())
        return error("no command given");
    if (auto program = find_program(cmd.argv[0], cmd.cwd); !program)
        return program.error();
    auto fifo = OutputFifo::create();
    if (!fifo)
        return fifo.error();
    // Without a cgroup, leftovers are still found: strace -f follows every process the command starts.
    std::optional<TaskCgroup> cgroup;
    if (auto cg = TaskCgroup::create("trace"))
        cgroup.emplace(std::move(cg).value());

    SpawnRequest req;
    req.argv = {strace_};
    for (auto& o : strace_options(seccomp_bpf_, raw_constants_))
        req.argv.push_back(std::move(o));
    for (const std::string& a : {std::string("-o"), fifo->path(), std::string("--")})
        req.argv.push_back(a);
    // strace looks argv[0] up in PATH itself (find_program above only reports a missing command):
    // the command keeps the argv[0] it was given, as under the eBPF engine.
    req.argv.insert(req.argv.end(), cmd.argv.begin(), cmd.argv.end());
    req.program = strace_;
    req.cwd = cmd.cwd;
    req.cgroup_fd = cgroup ? cgroup->fd() : -1;

    Trace trace;
    trace.recorder = "strace";
    RecordingSink sink(trace.recording);
    StraceParser parser(sink, cmd.cwd);
    auto pid = spawn(req);
    if (!pid)
        return Error{"cannot start strace: " + pid.error().message, pid.error().sys_errno};

    OutputReader reader(parser, cgroup ? &*cgroup : nullptr, *pid);
    std::thread reading([&reader, fd = fifo->read_fd()] { reader.run(fd); });
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
        rec.mark_incomplete("the strace output could not be parsed: " + reader.first_error()->message + more);
    }
    // strace exits with the command's status, but the root's own exit line is the command's word.
    if (auto status = parser.root_wait_status()) {
        trace.status = from_wait_status(*status);
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
