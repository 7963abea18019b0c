#include "qk/util/io.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "qk/util/unique_fd.hpp"

namespace qk {

Status write_all(int fd, std::string_view data)
{
    while (!data.empty()) {
        ssize_t n = retry_eintr([&] { return ::write(fd, data.data(), data.size()); });
        if (n <= 0)
            return sys_error("write", n == 0 ? EIO : errno);
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

Status send_all(int socket, std::string_view data)
{
    while (!data.empty()) {
        ssize_t n = retry_eintr([&] { return ::send(socket, data.data(), data.size(), MSG_NOSIGNAL); });
        if (n <= 0)
            return sys_error("send", n == 0 ? EIO : errno);
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

Status read_all(int fd, std::string& out, std::size_t size_hint)
{
    std::size_t have = out.size();
    out.resize(have + (size_hint ? size_hint : std::size_t{64} * 1024));
    for (;;) {
        if (have == out.size())
            out.resize(out.size() * 2);
        ssize_t n = retry_eintr([&] { return ::read(fd, out.data() + have, out.size() - have); });
        if (n < 0) {
            int err = errno;
            out.resize(have);
            return sys_error("read", err);
        }
        if (n == 0)
            break;
        have += static_cast<std::size_t>(n);
    }
    out.resize(have);
    return {};
}

Result<std::string> read_file(const std::string& path)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid())
        return sys_error("cannot read " + path);
    std::string text;
    struct stat st {};
    std::size_t hint = ::fstat(fd.get(), &st) == 0 && st.st_size > 0 ? static_cast<std::size_t>(st.st_size) + 1 : 0;
    if (Status s = read_all(fd.get(), text, hint); !s)
        return sys_error("cannot read " + path, s.error().sys_errno);
    return text;
}

Result<std::string> read_link_at(int dir_fd, const char* name, std::size_t size_hint)
{
    std::string text(std::max<std::size_t>(size_hint + 1, 256), '\0');
    for (;;) {
        const ssize_t n = ::readlinkat(dir_fd, name, text.data(), text.size());
        if (n < 0)
            return sys_error("readlink");
        if (static_cast<std::size_t>(n) < text.size()) {
            text.resize(static_cast<std::size_t>(n));
            return text;
        }
        text.resize(text.size() * 2);
    }
}

}  // namespace qk
