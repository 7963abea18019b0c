// Descriptors passed over a unix socket with one message (SCM_RIGHTS): how qk-sandbox-exec hands a
// command's listening socket to the run's network proxy, and how qk hands a command's sockets and cgroup
// to the run's helper (qk-sandbox-exec --serve). The one place that builds the control message.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/unique_fd.hpp"

namespace qk {

// The most descriptors one message carries here.
inline constexpr std::size_t kMaxPassedFds = 4;

// Sends `message` with `fds` (at most kMaxPassedFds, none when empty) attached in one sendmsg (MSG_NOSIGNAL,
// retried on EINTR). Returns what sendmsg does: the bytes sent, or -1 with errno.
ssize_t send_with_fds(int socket, std::string_view message, std::span<const int> fds);
inline ssize_t send_with_fd(int socket, std::string_view message, int fd)
{
    return send_with_fds(socket, message, std::span<const int>(&fd, 1));
}

// Receives one message of at most `max` bytes and the descriptors attached to it (up to kMaxPassedFds),
// close-on-exec, into `passed`, in the order sent (left empty when none came). `flags` are recvmsg's besides
// MSG_CMSG_CLOEXEC (MSG_DONTWAIT, say). The message; empty at the end of the stream or on an error (errno
// set).
std::string receive_with_fds(int socket, std::vector<UniqueFd>& passed, std::size_t max, int flags = 0);
// The same for one descriptor: `passed` takes the first that came (left as it was when none did); any more
// are closed.
std::string receive_with_fd(int socket, UniqueFd& passed, std::size_t max, int flags = 0);

}  // namespace qk
