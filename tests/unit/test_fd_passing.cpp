// send_with_fd(s) / receive_with_fd(s): descriptors passed with one message over a unix socket (SCM_RIGHTS), as
// qk-sandbox-exec hands a command's listening socket to the run's network proxy and qk its commands to the helper.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "qk/util/fd_passing.hpp"
#include "qk/util/io.hpp"

using namespace qk;

namespace {

struct SocketPair {
    UniqueFd a, b;
    explicit SocketPair(int type = SOCK_STREAM)
    {
        int fds[2];
        REQUIRE(::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) == 0);
        a.reset(fds[0]);
        b.reset(fds[1]);
    }
};

bool same_file(int x, int y)
{
    struct stat sx {}, sy {};
    return ::fstat(x, &sx) == 0 && ::fstat(y, &sy) == 0 && sx.st_dev == sy.st_dev && sx.st_ino == sy.st_ino;
}

}  // namespace

TEST_CASE("a descriptor sent with a message arrives with it, close-on-exec, as the same file", "[util][fd_passing]")
{
    SocketPair s;
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);

    const std::string hello = "qk-net 1 token\n";
    REQUIRE(send_with_fd(s.a.get(), hello, write_end.get()) == static_cast<ssize_t>(hello.size()));
    UniqueFd passed;
    CHECK(receive_with_fd(s.b.get(), passed, 256) == hello);
    REQUIRE(passed.valid());
    CHECK(passed.get() != write_end.get());
    CHECK(same_file(passed.get(), write_end.get()));
    CHECK((::fcntl(passed.get(), F_GETFD) & FD_CLOEXEC) != 0);
    // It is the pipe's write end: what goes in through it comes out of the read end.
    REQUIRE(::write(passed.get(), "x", 1) == 1);
    char c = 0;
    CHECK(::read(read_end.get(), &c, 1) == 1);
    CHECK(c == 'x');
}

TEST_CASE("a message without a descriptor leaves the one given unset; the end of the stream is an empty message",
          "[util][fd_passing]")
{
    SocketPair s;
    REQUIRE(::write(s.a.get(), "plain\n", 6) == 6);
    UniqueFd passed;
    CHECK(receive_with_fd(s.b.get(), passed, 256) == "plain\n");
    CHECK_FALSE(passed.valid());

    s.a.reset();
    CHECK(receive_with_fd(s.b.get(), passed, 256).empty());
    CHECK_FALSE(passed.valid());
}

TEST_CASE("a message is cut at the most asked for; nothing waiting with MSG_DONTWAIT is an empty message",
          "[util][fd_passing]")
{
    SocketPair s;
    UniqueFd passed;
    CHECK(receive_with_fd(s.b.get(), passed, 256, MSG_DONTWAIT).empty());
    CHECK(errno == EAGAIN);

    REQUIRE(::write(s.a.get(), "0123456789", 10) == 10);
    CHECK(receive_with_fd(s.b.get(), passed, 4) == "0123");
    CHECK(receive_with_fd(s.b.get(), passed, 256) == "456789");
}

TEST_CASE("sending on a socket whose peer is gone is an error, not a SIGPIPE", "[util][fd_passing]")
{
    SocketPair s;
    s.b.reset();
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    UniqueFd null_fd(fd);
    CHECK(send_with_fd(s.a.get(), "x", null_fd.get()) == -1);
    CHECK(errno == EPIPE);
}

TEST_CASE("send_all sends all of a large message, and to a peer that is gone is EPIPE, not a SIGPIPE",
          "[util][fd_passing]")
{
    SocketPair s;
    const std::string big(1 << 20, 'q');  // more than a socket's buffer: sent in parts as it is read
    std::string got;
    std::thread reader([&] { REQUIRE(read_all(s.b.get(), got)); });
    CHECK(send_all(s.a.get(), big));
    s.a.reset();
    reader.join();
    CHECK(got == big);
    SocketPair gone;
    gone.b.reset();
    auto sent = send_all(gone.a.get(), "x");
    REQUIRE_FALSE(sent);
    CHECK(sent.error().sys_errno == EPIPE);
}

TEST_CASE("a descriptor sent with an empty message is taken, not left open in the process", "[util][fd_passing]")
{
    SocketPair s(SOCK_SEQPACKET);
    int pipe_fds[2];
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    UniqueFd r(pipe_fds[0]), w(pipe_fds[1]);
    REQUIRE(send_with_fd(s.a.get(), "", r.get()) == 0);
    UniqueFd passed;
    CHECK(receive_with_fd(s.b.get(), passed, 64).empty());
    REQUIRE(passed.valid());
    CHECK(same_file(passed.get(), r.get()));
}

TEST_CASE("several descriptors sent with one message arrive in the order sent, each close-on-exec",
          "[util][fd_passing]")
{
    SocketPair s(SOCK_SEQPACKET);
    int p[2], q[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(q, O_CLOEXEC) == 0);
    UniqueFd pr(p[0]), pw(p[1]), qr(q[0]), qw(q[1]);
    const int sent[] = {qw.get(), pr.get(), qr.get()};
    REQUIRE(send_with_fds(s.a.get(), "three", sent) == 5);
    std::vector<UniqueFd> passed;
    CHECK(receive_with_fds(s.b.get(), passed, 64) == "three");
    REQUIRE(passed.size() == 3);
    CHECK(same_file(passed[0].get(), qw.get()));
    CHECK(same_file(passed[1].get(), pr.get()));
    CHECK(same_file(passed[2].get(), qr.get()));
    for (const UniqueFd& fd : passed)
        CHECK((::fcntl(fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
}

TEST_CASE("more descriptors than one message carries are refused before anything is sent", "[util][fd_passing]")
{
    SocketPair s(SOCK_SEQPACKET);
    std::vector<int> many(kMaxPassedFds + 1, s.a.get());
    errno = 0;
    CHECK(send_with_fds(s.a.get(), "x", many) == -1);
    CHECK(errno == EINVAL);
    std::vector<UniqueFd> passed;
    CHECK(receive_with_fds(s.b.get(), passed, 64, MSG_DONTWAIT).empty());
    CHECK(passed.empty());
}

TEST_CASE("a message sent with no descriptor arrives with none", "[util][fd_passing]")
{
    SocketPair s(SOCK_SEQPACKET);
    REQUIRE(send_with_fds(s.a.get(), "bare", {}) == 4);
    std::vector<UniqueFd> passed;
    CHECK(receive_with_fds(s.b.get(), passed, 64) == "bare");
    CHECK(passed.empty());
}
