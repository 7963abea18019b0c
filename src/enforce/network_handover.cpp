// The hand-over of a command's listening socket to the run's proxy, the helper's side: one message with the
// descriptor attached, then the proxy's one-line answer.
#include <unistd.h>

#include <fmt/format.h>

#include "qk/enforce/network_proxy.hpp"
#include "qk/util/fd_passing.hpp"
#include "qk/util/io.hpp"

namespace qk::enforce {

Status hand_listener_to_proxy(int proxy, int listener, std::string_view token)
{
    const std::string hello = fmt::format("{}{}\n", kProxyHello, token);
    if (send_with_fd(proxy, hello, listener) != static_cast<ssize_t>(hello.size()))
        return sys_error("cannot hand the command's socket to the run's network proxy");
    char answer[256];
    ssize_t n = retry_eintr([&] { return ::read(proxy, answer, sizeof answer - 1); });
    if (n < 0)
        return sys_error("the run's network proxy did not answer");
    std::string_view said(answer, static_cast<std::size_t>(n));
    if (said != kProxyOk)
        return error(fmt::format("the run's network proxy refused the command's socket: {}",
                                 n == 0 ? std::string_view("it closed the connection") : said));
    return {};
}

}  // namespace qk::enforce
