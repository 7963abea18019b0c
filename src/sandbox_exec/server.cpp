#include "server.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>

#include "qk/enforce/sandbox_plan.hpp"
#include "qk/enforce/served_command.hpp"
#include "qk/util/fd_passing.hpp"
#include "qk/util/fork_into_cgroup.hpp"
#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/unique_fd.hpp"

extern char** environ;

namespace qk::sandbox_exec {
namespace {

using enforce::ServedAnswer;

void answer(int socket, const ServedAnswer& a)
{
    // qk may have stopped listening (its end closed as it was killed): nothing to do then.
    (void)send_all(socket, enforce::encode_answer(a));
}

// Closes every descriptor from 3 up but `keep`: the server's channel and the other commands' sockets must
// not reach a command's helper, nor anything it forks.
void close_all_but(int keep)
{
    auto close_from_to = [](unsigned first, unsigned last) {
        if (first > last)
            return;
        if (::syscall(SYS_close_range, first, last, 0U) == 0)
            return;
        // Before Linux 5.9: one by one, up to the limit.
        struct rlimit lim {};
        unsigned max = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 65536 ? lim.rlim_cur : 65536;
        for (unsigned fd = first; fd <= last && fd < max; ++fd)
            ::close(static_cast<int>(fd));
    };
    close_from_to(3, static_cast<unsigned>(keep) - 1);
    close_from_to(static_cast<unsigned>(keep) + 1, ~0U);
}

// Reads the request off the command's socket: its header (with the output fd attached), then its body.
// Whatever of the body came with the header's read is kept: the header ends at its newline, not at a read.
Result<enforce::ServedCommand> read_request(int socket, UniqueFd& output)
{
    const Error cut_short = error("qk closed the command's socket before its request was whole");
    std::string got;
    std::size_t newline;
    while ((newline = got.find('\n')) == std::string::npos) {
        if (got.size() >= enforce::kServedHeaderMax)
            return error("the request's header is not one qk-sandbox-exec can read");
        UniqueFd passed;
        std::string part = receive_with_fd(socket, passed, enforce::kServedHeaderMax - got.size());
        if (passed.valid())
            output = std::move(passed);
        if (part.empty())
            return cut_short;
        got += part;
    }
    QK_TRY(length, enforce::parse_served_header(std::string_view(got).substr(0, newline + 1)));
    std::string body = got.substr(newline + 1);
    if (body.size() > *length)
        return error("the request is longer than its header says");
    std::size_t have = body.size();
    body.resize(*length);
    while (have < body.size()) {
        ssize_t n = retry_eintr([&] { return ::read(socket, body.data() + have, body.size() - have); });
        if (n <= 0)
            return cut_short;
        have += static_cast<std::size_t>(n);
    }
    if (!output.valid())
        return error("the request came without the command's output");
    return enforce::decode_served_command(body);
}

[[noreturn]] void refuse(int socket, int output, int err, const char* step, const std::string& message)
{
    if (output >= 0)
        (void)write_all(output, "qk-sandbox-exec: " + printable_message(message) + "\n");
    answer(socket, {ServedAnswer::Kind::refused, err, step});
    ::_exit(enforce::kSetupFailedStatus);
}

// The child: its cgroup, nothing of the server's, the request; then the command's standard fds, group,
// directory and environment as record::spawn gives an exec'd helper, and the helper's own main.
[[noreturn]] void child(int socket, int cgroup, bool join, CommandLine run)
{
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (join && !join_cgroup(cgroup))
        refuse(socket, -1, errno, "cgroup", "cannot join the task's cgroup");
    close_all_but(socket);
    UniqueFd output;
    auto request = read_request(socket, output);
    if (!request)
        refuse(socket, output.get(), 0, "request", request.error().message);
    UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!null_fd.valid() || ::dup2(null_fd.get(), 0) < 0 || ::dup2(output.get(), 1) < 0 || ::dup2(output.get(), 2) < 0)
        refuse(socket, output.get(), errno, "stdio", "cannot set up the command's standard fds");
    null_fd.reset();
    output.reset();
    if (request->own_process_group && ::setpgid(0, 0) != 0)
        refuse(socket, 2, errno, "group", "cannot give the command a process group of its own");
    if (::chdir(request->cwd.c_str()) != 0)
        refuse(socket, 2, errno, "cwd", "cannot enter " + request->cwd);
    // The helper execs the command with `environ`: the request's, whole.
    static std::vector<char*> env;
    for (auto& e : request->env)
        env.push_back(e.data());
    env.push_back(nullptr);
    environ = env.data();
    answer(socket, {ServedAnswer::Kind::started, ::getpid(), {}});
    ::close(socket);
    std::vector<std::string> args(request->argv.begin() + 1, request->argv.end());
    int status = run(args);
    // As main's return would (exit's flush, whose failure changes no status): what the helper wrote to
    // stdio reaches the output before it ends.
    (void)std::fflush(nullptr);
    ::_exit(status);
}

}  // namespace

int serve(int channel, CommandLine run)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &chld, nullptr);
    UniqueFd reaped(::signalfd(-1, &chld, SFD_CLOEXEC));
    if (!reaped.valid()) {
        std::perror("qk-sandbox-exec --serve: signalfd");
        return enforce::kSetupFailedStatus;
    }
    std::map<pid_t, UniqueFd> running;  // each child's socket, answered when it is reaped
    for (;;) {
        struct pollfd fds[2] = {{channel, POLLIN, 0}, {reaped.get(), POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return enforce::kSetupFailedStatus;
        }
        if (fds[1].revents & POLLIN) {
            signalfd_siginfo info {};
            (void)!::read(reaped.get(), &info, sizeof info);
            int status = 0;
            for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
                auto it = running.find(pid);
                if (it == running.end())
                    continue;
                answer(it->second.get(), {ServedAnswer::Kind::ended, status, {}});
                running.erase(it);
            }
        }
        if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        std::vector<UniqueFd> passed;
        std::string message = receive_with_fds(channel, passed, 16);
        if (message.empty())
            return 0;  // qk closed the channel, or is gone: what still runs watches qk itself
        if (message == "hello") {
            (void)send_with_fds(channel, enforce::kServedHello, {});
            continue;
        }
        if (message != "run" || passed.empty() || passed.size() > 2)
            continue;  // not a request of ours: its descriptors are closed with `passed`
        const int socket = passed[0].get();
        const int cgroup = passed.size() == 2 ? passed[1].get() : -1;
        bool join = false;
        pid_t pid = cgroup >= 0 ? fork_into_cgroup(cgroup, join) : ::fork();
        if (pid == 0)
            child(socket, cgroup, join, run);
        if (pid < 0) {
            answer(socket, {ServedAnswer::Kind::failed, errno, {}});
            continue;
        }
        running.emplace(pid, std::move(passed[0]));
    }
}

}  // namespace qk::sandbox_exec
