#include "record/spawn.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/core.h>

#include "qk/util/unique_fd.hpp"

namespace qk::record {
namespace {

bool is_executable_file(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The child side, between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(const SpawnRequest& req, char* const* argv, int report_fd)
{
    int report[2] = {2, 0};  // {what failed: 1 chdir, 2 exec; errno}
    // The parent may block signals it handles on a thread of its own; the command must not inherit that.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (::chdir(req.cwd.c_str()) != 0) {
        report[0] = 1;
    } else {
        ::execv(req.program.empty() ? argv[0] : req.program.c_str(), argv);
    }
    report[1] = errno;
    (void)!::write(report_fd, report, sizeof(report));
    ::_exit(127);
}

pid_t clone_into_cgroup(int cgroup_fd)
{
    struct clone_args args {};
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<unsigned>(cgroup_fd);
    return static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof(args)));
}

}  // namespace

Result<std::string> find_program(const std::string& name, const std::string& cwd)
{
    if (name.empty())
        return error("no command given");
    if (name.find('/') != std::string::npos) {
        std::string path = name.front() == '/' ? name : cwd + "/" + name;
        if (::access(path.c_str(), F_OK) != 0)
            return sys_error(fmt::format("cannot run '{}'", name));
        return name;
    }
    const char* env = std::getenv("PATH");
    std::string path_var = env ? env : "/usr/local/bin:/usr/bin:/bin";
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

Result<pid_t> spawn(const SpawnRequest& req)
{
    std::vector<char*> argv;
    for (const auto& a : req.argv)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return sys_error("cannot create a pipe");
    UniqueFd read_end(fds[0]), write_end(fds[1]);

    pid_t pid = -1;
    if (req.cgroup_fd >= 0) {
        pid = clone_into_cgroup(req.cgroup_fd);
        if (pid < 0 && (errno == ENOSYS || errno == EINVAL || errno == E2BIG)) {
            // Older kernel: fork, then join the cgroup before exec.
            pid = ::fork();
            if (pid == 0) {
                sigset_t none;
                sigemptyset(&none);
                ::sigprocmask(SIG_SETMASK, &none, nullptr);
                int procs = ::openat(req.cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                if (procs < 0 || ::write(procs, "0", 1) != 1) {
                    int tagged[2] = {3, errno};
                    (void)!::write(write_end.get(), tagged, sizeof(tagged));
                    ::_exit(127);
                }
                exec_child(req, argv.data(), write_end.get());
            }
        }
    } else {
        pid = ::fork();
    }
    if (pid < 0)
        return sys_error(fmt::format("cannot start '{}'", req.argv.at(0)));
    if (pid == 0)
        exec_child(req, argv.data(), write_end.get());

    write_end.reset();
    int tagged[2] = {0, 0};
    ssize_t n;
    do {
        n = ::read(read_end.get(), tagged, sizeof(tagged));
    } while (n < 0 && errno == EINTR);
    if (n == sizeof(tagged)) {
        ::waitpid(pid, nullptr, 0);
        switch (tagged[0]) {
        case 1: return sys_error(fmt::format("cannot change to the directory '{}'", req.cwd), tagged[1]);
        case 3: return sys_error("cannot join the task's cgroup", tagged[1]);
        default: return sys_error(fmt::format("cannot run '{}'", req.argv.at(0)), tagged[1]);
        }
    }
    return pid;
}

ExitStatus wait_exit(pid_t pid)
{
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return exit_status_of(status);
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
