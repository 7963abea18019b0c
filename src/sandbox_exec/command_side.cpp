// The sandboxed side of one command (src/sandbox_exec/README.md's rows "reaper" and "command"): pid 1 of
// its pid namespace over an overlay, and the command itself, Landlocked just before exec.
#include "command_side.hpp"

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "qk/util/io.hpp"
#include "landlock.hpp"
#include "network.hpp"
#include "privileges.hpp"
#include "syscall_filter.hpp"

namespace qk::sandbox_exec {

void tell(int fd, const std::string& line)
{
    (void)write_all(fd, line + "\n");
}

void tell_setup(int fd, const SetupError& e)
{
    std::string message = e.message;
    for (char& c : message)
        if (c == '\n' || c == '\t')
            c = ' ';
    tell(fd, fmt::format("setup\t{}\t{}\t{}", e.stage, e.error, message));
}

void exec_command(const enforce::SandboxPlan& plan, const std::vector<std::string>& argv, const CommandSide& side)
{
    const int report = side.report;
    for (int sig : kForwarded)
        ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    LandlockCounts counts;
    Step step = restrict_self(plan, counts, side.proxy_port);
    tell(report, fmt::format("rules\t{}\t{}\t{}", counts.abi, counts.rules, counts.missing));
    if (!step)
        step = drop_privileges(!side.stand_ins_mapped);
    if (!step)
        step = refuse_io_uring();
    if (step) {
        tell_setup(report, *step);
        ::_exit(enforce::kSetupFailedStatus);
    }
    if (!plan.tmpdir.empty())
        ::setenv("TMPDIR", plan.tmpdir.c_str(), 1);
    if (side.proxy_port != 0)
        set_proxy_environment(side.proxy_port);
    // Nothing opened before Landlock may reach the command: such a descriptor would keep its rights.
    if (::syscall(SYS_close_range, 3, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */) != 0) {
        tell_setup(report, setup_error("fds", "cannot close qk's descriptors before the command starts"));
        ::_exit(enforce::kSetupFailedStatus);
    }
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    tell_setup(report, setup_error("exec", fmt::format("cannot run {}", argv[0])));
    ::_exit(127);
}

void reaper(const enforce::SandboxPlan& plan, const std::vector<std::string>& argv, const CommandSide& side)
{
    const int report = side.report;
    // The supervisor is single-threaded: its death is qk's word. Without it nothing kills this namespace.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        tell_setup(report, setup_error("reaper", "cannot ask to be killed with the supervisor"));
        ::_exit(enforce::kSetupFailedStatus);
    }
    pid_t command = ::fork();
    if (command < 0) {
        tell_setup(report, setup_error("fork", "cannot start the command"));
        ::_exit(enforce::kSetupFailedStatus);
    }
    if (command == 0)
        exec_command(plan, argv, side);
    static pid_t forward_to;
    forward_to = command;
    struct sigaction sa {};
    sa.sa_handler = [](int sig) { ::kill(forward_to, sig); };
    for (int sig : kForwarded)
        ::sigaction(sig, &sa, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (;;) {
        int status = 0;
        pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid == command || pid < 0) {
            tell(report, fmt::format("status\t{}", pid == command ? status : 1 << 8));
            ::_exit(0);
        }
    }
}

}  // namespace qk::sandbox_exec
