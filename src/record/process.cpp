#include "qk/record/process.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/core.h>

#include "qk/record/cgroup.hpp"
#include "qk/record/guardian.hpp"
#include "qk/util/fork_into_cgroup.hpp"
#include "qk/util/unique_fd.hpp"

extern char** environ;

namespace qk::record {
namespace {

constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

bool is_executable_file(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// What the child reports through the pipe when it cannot exec.
enum Failure : int { kChdir = 1, kExec = 2, kJoinCgroup = 3, kSetup = 4 };

// Everything the child needs, prepared by the parent: after fork only async-signal-safe calls.
struct ChildPlan {
    const char* program;
    char* const* argv;
    char* const* envp;
    const char* cwd;
    int cgroup_fd = -1;  // >= 0: join it before exec (fork_into_cgroup's fallback)
    int dev_null = -1;   // >= 3, with output >= 3, when the command's stdio is redirected
    int output = -1;
    bool own_process_group = false;
};

[[noreturn]] void fail(int report_fd, Failure what)
{
    int report[2] = {what, errno};
    (void)!::write(report_fd, report, sizeof(report));
    ::_exit(127);
}

// Leaves only 0, 1, 2 and `report_fd` (itself close-on-exec) open across exec: whatever another
// thread opened without O_CLOEXEC (another task's pipe) must not reach the command, where an
// unrelated holder would keep that pipe from ever reaching end of file.
void close_other_fds_on_exec()
{
    if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
    // Before Linux 5.11: mark them one by one.
    struct rlimit lim {};
    int max = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 65536 ? static_cast<int>(lim.rlim_cur) : 65536;
    for (int fd = 3; fd < max; fd++)
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // NOLINT(bugprone-unused-return-value): most are not open (EBADF)
}

// The child side, between fork and exec. Signals are all blocked on entry (see spawn).
[[noreturn]] void exec_child(const ChildPlan& plan, int report_fd)
{
    // An ignored signal stays ignored across exec, and the runner may ignore SIGPIPE: back to defaults
    // before anything is unblocked.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            ::sigaction(sig, &dfl, nullptr);
    if (plan.cgroup_fd >= 0 && !join_cgroup(plan.cgroup_fd))
        fail(report_fd, kJoinCgroup);
    if (plan.own_process_group && ::setpgid(0, 0) != 0)
        fail(report_fd, kSetup);
    if (plan.output >= 0) {
        if (::dup2(plan.dev_null, 0) < 0 || ::dup2(plan.output, 1) < 0 || ::dup2(plan.output, 2) < 0)
            fail(report_fd, kSetup);
        // A task's command gets 0, 1 and 2 only; qk-trace's command (stdio inherited) keeps what its
        // caller gave it, as `qk-trace -- cat <(echo)` needs.
        close_other_fds_on_exec();
    }
    if (::chdir(plan.cwd) != 0)
        fail(report_fd, kChdir);
    // The parent may block signals it handles on a thread of its own; the command must not inherit that.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(plan.program, plan.argv, plan.envp);
    fail(report_fd, kExec);
}

// A copy of `fd` above 0, 1 and 2, close-on-exec: the child's dup2 onto them must not clobber it.
Result<UniqueFd> above_stdio(int fd, const std::string& what)
{
    UniqueFd copy(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
    if (!copy.valid())
        return sys_error(fmt::format("cannot duplicate {}", what));
    return copy;
}

// Blocks every signal in this thread while it lives: a handler of ours must never run in the child
// between fork and exec, where it would act as us.
class AllSignalsBlocked {
public:
    AllSignalsBlocked()
    {
        sigset_t all;
        sigfillset(&all);
        ::pthread_sigmask(SIG_SETMASK, &all, &saved_);
    }
    ~AllSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
    AllSignalsBlocked(const AllSignalsBlocked&) = delete;
    AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

private:
    sigset_t saved_;
};

struct FileActions {
    posix_spawn_file_actions_t a;
    FileActions() { posix_spawn_file_actions_init(&a); }
    ~FileActions() { posix_spawn_file_actions_destroy(&a); }
};

struct SpawnAttr {
    posix_spawnattr_t a;
    SpawnAttr() { posix_spawnattr_init(&a); }
    ~SpawnAttr() { posix_spawnattr_destroy(&a); }
};

// No cgroup to start in: posix_spawn, which glibc runs as a vfork and which reports exec failures. The
// same clean start as exec_child gives.
Result<pid_t> spawn_plain(const SpawnRequest& req, char* const* argv, char* const* envp)
{
    // The child's own dup2 onto 1 and 2 would clobber an output fd that is itself 0, 1 or 2.
    UniqueFd moved_output;
    int output = req.output_fd;
    if (output >= 0 && output <= 2) {
        QK_TRY(copy, above_stdio(output, fmt::format("the output fd {}", output)));
        moved_output = std::move(copy).value();
        output = moved_output.get();
    }
    FileActions actions;
    if (output >= 0) {
        if (req.input_fd >= 3)
            posix_spawn_file_actions_adddup2(&actions.a, req.input_fd, 0);
        else
            posix_spawn_file_actions_addopen(&actions.a, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions.a, output, 1);
        posix_spawn_file_actions_adddup2(&actions.a, output, 2);
        // Whatever other threads opened without O_CLOEXEC (another task's pipe) must not reach the
        // command: a pipe held open by an unrelated process never reaches end of file.
        posix_spawn_file_actions_addclosefrom_np(&actions.a, 3);
    }
    posix_spawn_file_actions_addchdir_np(&actions.a, req.cwd.c_str());

    SpawnAttr attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (req.own_process_group)
        flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setflags(&attr.a, flags);
    posix_spawnattr_setpgroup(&attr.a, 0);
    posix_spawnattr_setsigmask(&attr.a, &none);
    posix_spawnattr_setsigdefault(&attr.a, &all);

    pid_t pid = -1;
    const char* program = req.program.empty() ? argv[0] : req.program.c_str();
    // glibc's posix_spawn returns once the exec succeeded or failed, so a process group exists now.
    if (int rc = ::posix_spawn(&pid, program, &actions.a, &attr.a, argv, envp); rc != 0) {
        // posix_spawn says only errno: a working directory that cannot be entered is told apart here.
        struct stat st {};
        int cwd_err = ::stat(req.cwd.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
        if (cwd_err != 0)
            return cwd_error(req, cwd_err);
        return sys_error(fmt::format("cannot run {}", program), rc);
    }
    return pid;
}

}  // namespace

Error cwd_error(const SpawnRequest& req, int err)
{
    return sys_error(fmt::format("cannot run {} in {}: the working directory cannot be entered; check the target's cwd",
                                 req.argv.at(0), req.cwd),
                     err);
}

std::optional<std::string> command_path(const std::vector<std::string>& env)
{
    if (env.empty())
        return std::nullopt;
    for (const auto& kv : env)
        if (kv.starts_with("PATH=") && kv.size() > 5)
            return kv.substr(5);
    return kDefaultPath;
}

Result<std::string> find_program(const std::string& name, const std::string& cwd,
                                 const std::optional<std::string>& path)
{
    if (name.empty())
        return error("no command given");
    if (name.find('/') != std::string::npos) {
        std::string full = name.front() == '/' ? name : cwd + "/" + name;
        if (::access(full.c_str(), F_OK) != 0)
            return sys_error(fmt::format("cannot run {}", name));
        return name;
    }
    std::string path_var;
    if (path) {
        path_var = *path;
    } else {
        const char* env = std::getenv("PATH");
        path_var = env ? env : kDefaultPath;
    }
    size_t start = 0;
    while (start <= path_var.size()) {
        size_t colon = path_var.find(':', start);
        std::string dir = path_var.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (dir.empty())
            dir = ".";
        if (dir.front() != '/')
            dir = cwd + "/" + dir;
        std::string candidate = dir + "/" + name;
        if (is_executable_file(candidate))
            return candidate;
        if (colon == std::string::npos)
            break;
        start = colon + 1;
    }
    return Error{fmt::format("command not found: '{}' is not in PATH ({})", name, path_var), ENOENT};
}

namespace {

Result<pid_t> spawn_process(const SpawnRequest& req)
{
    if (req.argv.empty())
        return error("no command given");
    std::vector<char*> argv, envp;
    for (const auto& a : req.argv)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : req.env)
        envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    if (req.cgroup_fd < 0)
        return spawn_plain(req, argv.data(), req.env.empty() ? environ : envp.data());

    UniqueFd dev_null, output;
    if (req.output_fd >= 0) {
        const bool input = req.input_fd >= 3;
        UniqueFd opened(input ? ::fcntl(req.input_fd, F_DUPFD_CLOEXEC, 3) : ::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (!opened.valid())
            return sys_error(input ? "cannot duplicate the command's input" : "cannot open /dev/null");
        QK_TRY(null_fd, above_stdio(opened.get(), input ? "the command's input" : "/dev/null"));
        QK_TRY(out_fd, above_stdio(req.output_fd, fmt::format("the output fd {}", req.output_fd)));
        dev_null = std::move(null_fd).value();
        output = std::move(out_fd).value();
    }

    ChildPlan plan;
    plan.program = req.program.empty() ? argv[0] : req.program.c_str();
    plan.argv = argv.data();
    plan.envp = req.env.empty() ? environ : envp.data();
    plan.cwd = req.cwd.c_str();
    plan.dev_null = dev_null.get();
    plan.output = output.get();
    plan.own_process_group = req.own_process_group;

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return sys_error("cannot create a pipe");
    UniqueFd read_end(fds[0]), write_end(fds[1]);

    pid_t pid = -1;
    {
        AllSignalsBlocked blocked;
        bool join_in_child = false;
        pid = fork_into_cgroup(req.cgroup_fd, join_in_child);
        if (pid == 0) {
            plan.cgroup_fd = join_in_child ? req.cgroup_fd : -1;
            exec_child(plan, write_end.get());
        }
    }
    if (pid < 0)
        return sys_error(fmt::format("cannot start '{}'", req.argv.at(0)));

    write_end.reset();
    int report[2] = {0, 0};
    ssize_t n;
    do {
        n = ::read(read_end.get(), report, sizeof(report));
    } while (n < 0 && errno == EINTR);
    if (n == sizeof(report)) {
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        switch (report[0]) {
        case kChdir: return cwd_error(req, report[1]);
        case kJoinCgroup: return sys_error("cannot join the task's cgroup", report[1]);
        case kSetup:
            return sys_error(fmt::format("cannot set up the process group or standard fds of '{}'", req.argv.at(0)),
                             report[1]);
        default: return sys_error(fmt::format("cannot run '{}'", req.argv.at(0)), report[1]);
        }
    }
    return pid;
}

}  // namespace

Result<pid_t> spawn(const SpawnRequest& req)
{
    auto pid = spawn_process(req);
    // A group of its own is what a stop signals: the guardian signals it too, should qk be killed.
    if (pid && req.own_process_group)
        guardian::watch_process_group(*pid);
    return pid;
}

ExitStatus wait_exit(pid_t pid)
{
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    guardian::forget_process_group(pid);
    return exit_status_of(status);
}

void wait_exited_unreaped(pid_t pid)
{
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
}

ExitStatus exit_status_of(int wait_status)
{
    ExitStatus s;
    if (WIFSIGNALED(wait_status))
        s.signal = WTERMSIG(wait_status);
    else
        s.code = WEXITSTATUS(wait_status);
    return s;
}

}  // namespace qk::record
