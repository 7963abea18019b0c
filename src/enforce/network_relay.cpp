#include "network_relay.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "qk/rules/network.hpp"
#include "qk/util/io.hpp"

namespace qk::enforce::detail {
namespace {

constexpr std::size_t kMaxHead = std::size_t{64} * 1024;
constexpr int kConnectTimeoutMs = 30'000;
constexpr std::size_t kRelayBuffer = std::size_t{256} * 1024;

bool iequals(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if ((a[i] | 0x20) != (b[i] | 0x20))
            return false;
    return true;
}

// "host:port", "[v6]:port", "host" (with `default_port`). nullopt when the port is not 1-65535.
std::optional<std::pair<std::string, std::uint16_t>> split_authority(std::string_view a, std::uint16_t default_port)
{
    std::string_view host = a, port_text;
    if (a.starts_with('[')) {
        std::size_t close = a.find(']');
        if (close == std::string_view::npos)
            return std::nullopt;
        host = a.substr(1, close - 1);
        std::string_view rest = a.substr(close + 1);
        if (!rest.empty() && (rest[0] != ':' || rest.size() == 1))
            return std::nullopt;
        port_text = rest.empty() ? rest : rest.substr(1);
    } else if (std::size_t colon = a.rfind(':'); colon != std::string_view::npos) {
        host = a.substr(0, colon);
        port_text = a.substr(colon + 1);
    }
    unsigned port = default_port;
    if (!port_text.empty()) {
        auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (ec != std::errc() || end != port_text.data() + port_text.size())
            return std::nullopt;
    }
    if (host.empty() || port == 0 || port > 65535)
        return std::nullopt;
    return std::pair{std::string(host), static_cast<std::uint16_t>(port)};
}

std::string_view line_at(std::string_view text, std::size_t& pos)
{
    std::size_t end = text.find("\r\n", pos);
    if (end == std::string_view::npos)
        end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 2;
    return line;
}

}  // namespace

Result<ProxyRequest> parse_proxy_request(std::string_view head)
{
    std::size_t pos = 0;
    std::string_view first = line_at(head, pos);
    std::size_t sp1 = first.find(' '), sp2 = first.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1)
        return error("qk's network proxy takes HTTP requests: the first line is not \"METHOD TARGET HTTP/1.x\"");
    std::string_view method = first.substr(0, sp1), target = first.substr(sp1 + 1, sp2 - sp1 - 1),
                     version = first.substr(sp2 + 1);
    ProxyRequest r;
    if (method == "CONNECT") {
        auto a = split_authority(target, 0);
        if (!a)
            return error(fmt::format("qk's network proxy: CONNECT takes host:port, not \"{}\"", target));
        r.tunnel = true;
        std::tie(r.host, r.port) = *a;
        return r;
    }
    constexpr std::string_view kHttp = "http://";
    if (target.size() < kHttp.size() || !iequals(target.substr(0, kHttp.size()), kHttp))
        return error(fmt::format("qk's network proxy takes an absolute http:// URL or CONNECT host:port, not \"{}\" "
                                 "(https goes through CONNECT)",
                                 target));
    std::string_view rest = target.substr(kHttp.size());
    std::size_t slash = rest.find_first_of("/?#");
    auto a = split_authority(rest.substr(0, slash), 80);
    if (!a || a->first.find('@') != std::string::npos)
        return error(fmt::format("qk's network proxy cannot tell the host of \"{}\"", target));
    std::tie(r.host, r.port) = *a;
    // The origin form: "/path?query", and "/?query" where the URL has no path.
    std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    r.head = fmt::format("{} {}{} {}\r\n", method, path.starts_with('/') ? "" : "/", path, version);
    // Each request gets a connection of its own, to the host it names: a client that reused this one
    // for another host would reach the first one's server, so the server is asked to close.
    for (std::string_view line = line_at(head, pos); !line.empty(); line = line_at(head, pos)) {
        std::string_view name = line.substr(0, line.find(':'));
        if (iequals(name, "Connection") || iequals(name, "Proxy-Connection") || iequals(name, "Keep-Alive") ||
            iequals(name, "Proxy-Authorization"))
            continue;
        r.head.append(line).append("\r\n");
    }
    r.head += "Connection: close\r\n\r\n";
    return r;
}

namespace {

void answer(int client, int code, std::string_view reason, std::string_view body)
{
    (void)send_all(client, fmt::format("HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                       "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                                       code, reason, body.size(), body));
}

// Reads up to the blank line ending the head; `extra` gets what came after it. False on EOF, stop, or a
// head too long.
bool read_head(int client, int stop, std::string& head, std::string& extra)
{
    char buf[8192];
    while (head.size() < kMaxHead) {
        pollfd fds[2] = {{client, POLLIN, 0}, {stop, POLLIN, 0}};
        if (retry_eintr([&] { return ::poll(fds, 2, -1); }) < 0 || fds[1].revents)
            return false;
        ssize_t n = retry_eintr([&] { return ::recv(client, buf, sizeof buf, 0); });
        if (n <= 0)
            return false;
        head.append(buf, static_cast<std::size_t>(n));
        if (std::size_t end = head.find("\r\n\r\n"); end != std::string::npos) {
            extra = head.substr(end + 4);
            head.resize(end + 4);
            return true;
        }
    }
    return false;
}

std::string address_text(const sockaddr* sa)
{
    char text[INET6_ADDRSTRLEN] {};
    const void* a = sa->sa_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(sa)->sin_addr)
                                             : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
    return ::inet_ntop(sa->sa_family, a, text, sizeof text) ? std::string(text) : std::string();
}

// Connects to host:port from qk's own network. A name that resolves to the machine's loopback is refused
// unless the declaration named a loopback host itself: a wildcard must not open qk's host's own servers.
Result<UniqueFd> connect_upstream(const ProxyRequest& r, int stop, bool& loopback_refused)
{
    addrinfo hints {};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(r.port);
    if (int rc = ::getaddrinfo(r.host.c_str(), port.c_str(), &hints, &found); rc != 0)
        return error(fmt::format("cannot resolve {}: {}", r.host, ::gai_strerror(rc)));
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> hold(found, &::freeaddrinfo);
    std::string last = "no address";
    for (const addrinfo* ai = found; ai; ai = ai->ai_next) {
        const std::string text = address_text(ai->ai_addr);
        if (rules::is_loopback(text) && !rules::is_loopback(r.host)) {
            last = fmt::format("{} resolves to this machine's loopback ({}), which only a loopback host declared as such "
                               "reaches (\"127.0.0.1:{}\" or \"localhost:{}\")",
                               r.host, text, r.port, r.port);
            loopback_refused = true;
            continue;
        }
        UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
        if (!fd.valid())
            continue;
        if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
            last = fmt::format("{}: {}", text, std::strerror(errno));
            continue;
        }
        pollfd fds[2] = {{fd.get(), POLLOUT, 0}, {stop, POLLIN, 0}};
        int err = 0;
        socklen_t len = sizeof err;
        if (retry_eintr([&] { return ::poll(fds, 2, kConnectTimeoutMs); }) <= 0 || fds[1].revents)
            err = ETIMEDOUT;
        else if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err != 0) {
            last = fmt::format("{}: {}", text, std::strerror(err));
            loopback_refused = false;
            continue;
        }
        int flags = ::fcntl(fd.get(), F_GETFL);
        (void)::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);  // blocking from here; the relay polls
        int one = 1;
        (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // latency over batching
        return fd;
    }
    return error(fmt::format("cannot connect to {}:{} ({})", r.host, r.port, last));
}

// Bytes both ways until both sides have ended (a half-close is passed on) or the proxy stops.
void pump(int a, int b, int stop)
{
    std::vector<char> buf(kRelayBuffer);
    bool open[2] = {true, true};  // a->b, b->a
    while (open[0] || open[1]) {
        pollfd fds[3] = {{open[0] ? a : -1, POLLIN, 0}, {open[1] ? b : -1, POLLIN, 0}, {stop, POLLIN, 0}};
        if (retry_eintr([&] { return ::poll(fds, 3, -1); }) < 0 || fds[2].revents)
            return;
        for (int side = 0; side < 2; ++side) {
            if (!open[side] || !fds[side].revents)
                continue;
            const int from = side == 0 ? a : b, to = side == 0 ? b : a;
            ssize_t n = retry_eintr([&] { return ::recv(from, buf.data(), buf.size(), 0); });
            if (n <= 0 || !send_all(to, std::string_view(buf.data(), static_cast<std::size_t>(n)))) {
                open[side] = false;
                (void)::shutdown(to, SHUT_WR);  // the other side may still be talking
                if (n < 0)
                    return;
            }
        }
    }
}

}  // namespace

void relay_connection(UniqueFd client, const RelayTask& task, int stop)
{
    std::string head, extra;
    if (!read_head(client.get(), stop, head, extra))
        return;
    auto request = parse_proxy_request(head);
    if (!request) {
        answer(client.get(), 400, "Bad Request", request.error().message + "\n");
        return;
    }
    const std::string where = fmt::format("{}:{}", request->host, request->port);
    if (!task.allows(request->host, request->port)) {
        std::string why = fmt::format("qk refused {} to task {}: its declared network ({}) does not list it; add "
                                      "\"{}\" (or \"{}\" for any port) to it to allow it",
                                      where, task.task_id, task.declaration, where, request->host);
        answer(client.get(), 403, "Forbidden", why + "\n");
        task.refused({request->host, request->port, std::move(why)});
        return;
    }
    bool loopback_refused = false;
    auto upstream = connect_upstream(*request, stop, loopback_refused);
    if (!upstream && loopback_refused) {
        std::string why = fmt::format("qk refused {} to task {}: {}", where, task.task_id, upstream.error().message);
        answer(client.get(), 403, "Forbidden", why + "\n");
        task.refused({request->host, request->port, std::move(why)});
        return;
    }
    if (!upstream) {
        answer(client.get(), 502, "Bad Gateway", fmt::format("qk's network proxy: {}\n", upstream.error().message));
        return;
    }
    if (request->tunnel) {
        if (!send_all(client.get(), "HTTP/1.1 200 Connection established\r\n\r\n"))
            return;
    } else if (!send_all(upstream->get(), request->head)) {
        return;
    }
    if (!extra.empty() && !send_all(upstream->get(), extra))
        return;
    pump(client.get(), upstream->get(), stop);
}

}  // namespace qk::enforce::detail
