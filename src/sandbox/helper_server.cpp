#include "helper_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <span>
#include <string_view>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "qk/enforce/served_command.hpp"
#include "qk/util/fd_passing.hpp"
#include "qk/util/io.hpp"

namespace qk::sandbox {
namespace {

using enforce::ServedAnswer;

Result<std::array<UniqueFd, 2>> socket_pair(int type)
{
    int fds[2];
    if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) != 0)
        return sys_error("cannot make a socket pair for the sandbox's helper");
    return std::array<UniqueFd, 2>{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// One command's socket, read an answer at a time.
class Answers {
public:
    explicit Answers(UniqueFd socket) : socket_(std::move(socket)) {}
    // The next answer; an Error when the socket ends first (the server is gone) or says what qk cannot read.
    Result<ServedAnswer> next()
    {
        for (;;) {
            QK_TRY(got, enforce::take_answer(buffer_));
            if (*got)
                return **got;
            char chunk[256];
            ssize_t n = retry_eintr([&] { return ::read(socket_.get(), chunk, sizeof chunk); });
            if (n <= 0)
                return sys_error("qk-sandbox-exec --serve ended before it said how the command ended",
                                 n < 0 ? errno : EPIPE);
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
    }

private:
    UniqueFd socket_;
    std::string buffer_;
};

Result<record::ExitStatus> wait_ended(Answers& answers)
{
    QK_TRY(a, answers.next());
    if (a->kind != ServedAnswer::Kind::ended)
        return error("qk-sandbox-exec --serve answered out of order");
    return record::exit_status_of(static_cast<int>(a->value));
}

}  // namespace

HelperServer::~HelperServer()
{
    std::lock_guard lock(mutex_);
    channel_.reset();
    if (pid_ > 0)
        record::wait_exit(pid_);
}

Error HelperServer::gone(const std::string& why)
{
    broken_ = error(fmt::format("the run's sandbox helper ({} --serve) {}", helper_, why));
    return *broken_;
}

Result<int> HelperServer::channel()
{
    std::lock_guard lock(mutex_);
    if (broken_)
        return *broken_;
    if (channel_.valid())
        return channel_.get();
    QK_TRY(pair, socket_pair(SOCK_SEQPACKET));
    UniqueFd null_fd(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    if (!null_fd.valid())
        return sys_error("cannot open /dev/null");
    // Its own process group: a terminal's Ctrl-C is qk's to pass on, through each command's cgroup. Nothing
    // of qk's but its channel: its output goes nowhere, its environment is bare (each child is given its own).
    record::SpawnRequest spawn{helper_, {helper_, "--serve"}, "/", -1, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"},
                               null_fd.get(), (*pair)[1].get(), true};
    auto pid = record::spawn(spawn);
    if (!pid)
        return gone("could not be started: " + pid.error().message);
    pid_ = *pid;
    channel_ = std::move((*pair)[0]);
    // It says it serves before the first command is its: a qk-sandbox-exec of another build (QK_SANDBOX_EXEC)
    // that does not exits instead, and each command's helper is then exec'd as before.
    std::string hello;
    if (send_with_fds(channel_.get(), "hello", {}) == 5) {
        struct pollfd p {channel_.get(), POLLIN, 0};
        if (retry_eintr([&] { return ::poll(&p, 1, 10'000); }) == 1) {
            std::vector<UniqueFd> none;
            hello = receive_with_fds(channel_.get(), none, 64);
        }
    }
    if (hello != enforce::kServedHello) {
        channel_.reset();
        record::wait_exit(std::exchange(pid_, -1));
        return gone("does not serve commands");
    }
    return channel_.get();
}

bool HelperServer::available()
{
    auto server = channel();
    if (!server)
        return false;
    // Gone since the last command (killed from outside, say): the next commands exec a helper each rather
    // than fail.
    struct pollfd p {*server, 0, 0};
    if (::poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR))) {
        std::lock_guard lock(mutex_);
        if (!broken_)
            gone("has ended");
        return false;
    }
    return true;
}

Result<record::ForeignProcess> HelperServer::start(const record::SpawnRequest& request)
{
    QK_TRY(server, channel());
    QK_TRY(pair, socket_pair(SOCK_STREAM));
    UniqueFd mine = std::move((*pair)[0]);
    {
        std::array<int, 2> fds{(*pair)[1].get(), request.cgroup_fd};
        std::span<const int> passed(fds.data(), request.cgroup_fd >= 0 ? 2 : 1);
        if (send_with_fds(*server, "run", passed) != 3) {
            std::lock_guard lock(mutex_);
            return gone(fmt::format("is gone: {}", std::strerror(errno)));
        }
    }
    (*pair)[1].reset();
    enforce::ServedCommand command{request.argv, request.env, request.cwd, request.own_process_group};
    const std::string body = enforce::encode_body(command);
    // Should the child be gone already (it refused the request), its answer says why: a failed send is not.
    if (send_with_fd(mine.get(), enforce::served_header(body.size()), request.output_fd) > 0)
        (void)send_all(mine.get(), body);
    auto answers = std::make_shared<Answers>(std::move(mine));
    QK_TRY(first, answers->next());
    switch (first->kind) {
    case ServedAnswer::Kind::started:
        return record::ForeignProcess{static_cast<pid_t>(first->value), [answers] { return wait_ended(*answers); }};
    case ServedAnswer::Kind::failed:
        return sys_error(fmt::format("cannot start '{}'", request.argv.at(0)), static_cast<int>(first->value));
    case ServedAnswer::Kind::refused:
        (void)wait_ended(*answers);  // the child exits at once: reaped before qk goes on
        if (first->step == "cwd")
            return record::cwd_error(request, static_cast<int>(first->value));
        return sys_error(fmt::format("the sandbox's helper could not start the command ({})", first->step),
                         static_cast<int>(first->value));
    case ServedAnswer::Kind::ended: break;
    }
    return error("qk-sandbox-exec --serve answered out of order");
}

}  // namespace qk::sandbox
