// A descriptor passed over a unix socket with one message (SCM_RIGHTS): how qk-sandbox-exec hands a
// command's listening socket to the run's network proxy. The one place that builds the control message.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "qk/util/unique_fd.hpp"

namespace qk {

// Sends `message` with `fd` attached in one sendmsg (MSG_NOSIGNAL, retried on EINTR). Returns what sendmsg
// does: the bytes sent, or -1 with errno.
ssize_t send_with_fd(int socket, std::string_view message, int fd);

// Receives one message of at most `max` bytes and the descriptor attached to it, close-on-exec, into
// `passed` (left as it was when none came). `flags` are recvmsg's besides MSG_CMSG_CLOEXEC (MSG_DONTWAIT,
// say). The message; empty at the end of the stream or on an error (errno set).
std::string receive_with_fd(int socket, UniqueFd& passed, std::size_t max, int flags = 0);

}  // namespace qk
