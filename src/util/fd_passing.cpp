#include "qk/util/fd_passing.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "qk/util/io.hpp"

namespace qk {
namespace {

// One message of the bytes `iov` names, with room for kMaxPassedFds descriptors in its control data.
struct FdMessage {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] {};
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

ssize_t send_with_fds(int socket, std::string_view message, std::span<const int> fds)
{
    if (fds.size() > kMaxPassedFds) {
        errno = EINVAL;
        return -1;
    }
    iovec iov {const_cast<char*>(message.data()), message.size()};
    FdMessage m(iov);
    msghdr& msg = m.msg;
    if (fds.empty()) {
        msg.msg_control = nullptr;
        msg.msg_controllen = 0;
    } else {
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    return retry_eintr([&] { return ::sendmsg(socket, &msg, MSG_NOSIGNAL); });
}

std::string receive_with_fds(int socket, std::vector<UniqueFd>& passed, std::size_t max, int flags)
{
    passed.clear();
    std::vector<char> buf(max);
    iovec iov {buf.data(), buf.size()};
    FdMessage m(iov);
    msghdr& msg = m.msg;
    ssize_t n = retry_eintr([&] { return ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | flags); });
    // Descriptors may come with an empty message (a datagram or seqpacket peer): taken all the same, so
    // that `passed` closes them rather than the process keeping them.
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int got = -1;
            std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
            passed.emplace_back(got);
        }
    }
    return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

std::string receive_with_fd(int socket, UniqueFd& passed, std::size_t max, int flags)
{
    std::vector<UniqueFd> all;
    std::string message = receive_with_fds(socket, all, max, flags);
    if (!all.empty())
        passed = std::move(all.front());
    return message;
}

}  // namespace qk
