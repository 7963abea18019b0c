// Reading and writing whole buffers through file descriptors, retrying what a signal interrupts and
// what a short read or write leaves.
#pragma once

#include <cerrno>
#include <cstddef>
#include <string>
#include <string_view>

#include "qk/util/result.hpp"

namespace qk {

// Calls `f` again for as long as it fails with EINTR; returns its last result.
template <class F>
auto retry_eintr(F&& f) -> decltype(f())
{
    decltype(f()) r;
    do
        r = f();
    while (r < 0 && errno == EINTR);
    return r;
}

// Writes all of `data`. Errors: "write: <strerror>".
Status write_all(int fd, std::string_view data);
// The same on a socket, without SIGPIPE when its peer is gone (MSG_NOSIGNAL): an Error (EPIPE) instead.
Status send_all(int socket, std::string_view data);
// Reads to the end of the file, appending to `out`; `size_hint` sizes the first read (the file's size
// plus one sees the end in one call).
Status read_all(int fd, std::string& out, std::size_t size_hint = 0);
// The whole file at `path`; errors name it.
Result<std::string> read_file(const std::string& path);
// The text of symbolic link `name` in `dir_fd`, however long (readlinkat grown until it fits: a link's
// st_size is 0 on some filesystems, and the link may change between a stat and the read). `size_hint`:
// its st_size, when known. Errors: "readlink: <strerror>", errno kept.
Result<std::string> read_link_at(int dir_fd, const char* name, std::size_t size_hint = 0);

}  // namespace qk
