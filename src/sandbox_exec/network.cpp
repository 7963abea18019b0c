#include "network.hpp"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>

#include "qk/enforce/network_proxy.hpp"
#include "qk/util/io.hpp"

namespace qk::sandbox_exec {

Step connect_proxy(const std::string& path, UniqueFd& out)
{
    sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        return SetupError{"network-proxy", ENAMETOOLONG, "the proxy's socket path is too long: " + path};
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid() || ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
        return setup_error("network-proxy", "cannot reach the run's network proxy at " + path);
    out = std::move(fd);
    return std::nullopt;
}

namespace {

Step loopback_up()
{
    UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq ifr {};
    std::memcpy(ifr.ifr_name, "lo", 3);
    if (!s.valid() || ::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0)
        return setup_error("network", "cannot read the flags of the network namespace's loopback");
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    if (::ioctl(s.get(), SIOCSIFFLAGS, &ifr) != 0)
        return setup_error("network", "cannot bring up the network namespace's loopback");
    return std::nullopt;
}

}  // namespace

Step set_up_network(int proxy, const std::string& token, std::uint16_t& port)
{
    if (auto e = loopback_up())
        return e;
    if (proxy < 0)
        return std::nullopt;
    UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (!listener.valid() || ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener.get(), SOMAXCONN) != 0 ||
        ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        return setup_error("network", "cannot listen on the network namespace's loopback for the proxy");
    if (auto handed = enforce::hand_listener_to_proxy(proxy, listener.get(), token); !handed)
        return SetupError{"network-proxy", handed.error().sys_errno ? handed.error().sys_errno : EPERM,
                          handed.error().message};
    port = ntohs(addr.sin_port);
    return std::nullopt;
}

Step try_network_namespace()
{
    pid_t child = ::fork();
    if (child < 0)
        return setup_error("netns", "cannot fork to try a network namespace");
    if (child == 0) {
        Step e = ::unshare(CLONE_NEWNET) == 0 ? loopback_up() : setup_error("netns", "cannot make a network namespace");
        ::_exit(e ? (e->error & 0xff) : 0);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return std::nullopt;
    const int err = WIFEXITED(status) ? WEXITSTATUS(status) : EINVAL;
    return SetupError{"netns", err,
                      fmt::format("cannot make a network namespace with its loopback up: {}; a task that declares its "
                                  "network (false or a list) is refused under enforce here",
                                  std::strerror(err))};
}

void set_proxy_environment(std::uint16_t port)
{
    const std::string url = fmt::format("http://127.0.0.1:{}", port);
    for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"})
        ::setenv(name, url.c_str(), 1);
    // Node.js reads the variables above itself from version 24 (and 22.21) when asked to; earlier ones
    // only through a tool's own agent.
    ::setenv("NODE_USE_ENV_PROXY", "1", 1);
    // An exception would be a connection with no route: said by the proxy's refusals, not left to time out.
    for (const char* name : {"NO_PROXY", "no_proxy"})
        ::unsetenv(name);
}

}  // namespace qk::sandbox_exec
