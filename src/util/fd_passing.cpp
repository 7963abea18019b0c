#include "qk/util/fd_passing.hpp"

#include <sys/socket.h>

#include <cstring>
#include <vector>

#include "qk/util/io.hpp"

namespace qk {
namespace {

// One message of the bytes `iov` names, with room for one descriptor in its control data.
struct FdMessage {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] {};
    msghdr msg {};

    explicit FdMessage(iovec& iov)
    {
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
    }
    FdMessage(const FdMessage&) = delete;  // msg points into it
    FdMessage& operator=(const FdMessage&) = delete;
};

}  // namespace

ssize_t send_with_fd(int socket, std::string_view message, int fd)
{
    iovec iov {const_cast<char*>(message.data()), message.size()};
    FdMessage m(iov);
    msghdr& msg = m.msg;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    return retry_eintr([&] { return ::sendmsg(socket, &msg, MSG_NOSIGNAL); });
}

std::string receive_with_fd(int socket, UniqueFd& passed, std::size_t max, int flags)
{
    std::vector<char> buf(max);
    iovec iov {buf.data(), buf.size()};
    FdMessage m(iov);
    msghdr& msg = m.msg;
    ssize_t n = retry_eintr([&] { return ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | flags); });
    // A descriptor may come with an empty message (a datagram or seqpacket peer): taken all the same, so
    // that `passed` closes it rather than the process keeping it.
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int got = -1;
            std::memcpy(&got, CMSG_DATA(c), sizeof got);
            passed.reset(got);
        }
    return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

}  // namespace qk
