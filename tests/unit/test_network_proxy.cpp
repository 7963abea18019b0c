// The run's filtering proxy (enforce/network_proxy.cpp): what it reads of a request, and served for real on
// 127.0.0.1: a listener handed over as qk-sandbox-exec hands it, a listed host relayed both ways to a real
// server, an unlisted one refused with a 403 naming it and recorded, an unknown token refused.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "enforce/network_relay.hpp"
#include "qk/enforce/network_proxy.hpp"
#include "qk/util/io.hpp"
#include "qk/util/unique_fd.hpp"
#include "test_support.hpp"

using namespace qk;
using namespace qk::enforce;

namespace {

// A TCP socket listening on 127.0.0.1 at a port the kernel picks.
UniqueFd listen_loopback(std::uint16_t& port)
{
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd.get(), 16) == 0);
    REQUIRE(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
    return fd;
}

UniqueFd connect_tcp(std::uint16_t port)
{
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    return fd;
}

UniqueFd connect_unix(const std::string& path)
{
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a {};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    return fd;
}

// Reads until the peer closes.
std::string read_to_end(int fd)
{
    std::string out;
    REQUIRE(read_all(fd, out));
    return out;
}

}  // namespace

TEST_CASE("the proxy reads CONNECT and absolute URLs, and asks the server to close", "[enforce][network_proxy]")
{
    auto c = detail::parse_proxy_request("CONNECT registry.npmjs.org:443 HTTP/1.1\r\nHost: x\r\n\r\n");
    REQUIRE(c);
    CHECK(c->tunnel);
    CHECK(c->host == "registry.npmjs.org");
    CHECK(c->port == 443);
    auto v6 = detail::parse_proxy_request("CONNECT [::1]:8080 HTTP/1.1\r\n\r\n");
    REQUIRE(v6);
    CHECK(v6->host == "::1");
    CHECK(v6->port == 8080);

    auto g = detail::parse_proxy_request("GET http://Example.com/a/b?c=1 HTTP/1.1\r\nHost: example.com\r\n"
                                         "Proxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n");
    REQUIRE(g);
    CHECK_FALSE(g->tunnel);
    CHECK(g->host == "Example.com");
    CHECK(g->port == 80);
    CHECK(g->head == "GET /a/b?c=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nConnection: close\r\n\r\n");
    auto q = detail::parse_proxy_request("GET http://h:8080?x HTTP/1.0\r\n\r\n");
    REQUIRE(q);
    CHECK(q->port == 8080);
    CHECK(q->head == "GET /?x HTTP/1.0\r\nConnection: close\r\n\r\n");

    auto message = [](std::string_view head) {
        auto r = detail::parse_proxy_request(head);
        REQUIRE_FALSE(r);
        return r.error().message;
    };
    CHECK(message("GET /local HTTP/1.1\r\n\r\n").find("an absolute http:// URL or CONNECT host:port") != std::string::npos);
    CHECK(message("GET https://h/ HTTP/1.1\r\n\r\n").find("https goes through CONNECT") != std::string::npos);
    CHECK(message("CONNECT h:99999 HTTP/1.1\r\n\r\n").find("CONNECT takes host:port") != std::string::npos);
    CHECK(message("CONNECT h HTTP/1.1\r\n\r\n").find("CONNECT takes host:port") != std::string::npos);
    CHECK(message("GET http://user@h/ HTTP/1.1\r\n\r\n").find("cannot tell the host") != std::string::npos);
    CHECK(message("nonsense\r\n\r\n").find("METHOD TARGET") != std::string::npos);
}

TEST_CASE("the proxy relays a listed host and refuses the rest, naming it", "[enforce][network_proxy]")
{
    test::TempDir dir("qk-proxy");
    auto proxy = NetworkProxy::start((dir.path / "proxy").string());
    REQUIRE(proxy);
    std::uint16_t server_port = 0, other_port = 0, served_port = 0;
    UniqueFd server = listen_loopback(server_port);
    UniqueFd other = listen_loopback(other_port);
    const std::string token = (*proxy)->add_task("app:build", "its target", [&](std::string_view host, std::uint16_t port) {
        return host == "127.0.0.1" && port == server_port;
    });

    // As qk-sandbox-exec does in the command's namespace: a listener handed over, served while the
    // connection it came on stays open.
    UniqueFd helper = connect_unix((*proxy)->socket_path());
    UniqueFd served = listen_loopback(served_port);
    REQUIRE(hand_listener_to_proxy(helper.get(), served.get(), token));

    // A CONNECT to the listed host: bytes both ways with a real peer.
    UniqueFd client = connect_tcp(served_port);
    REQUIRE(write_all(client.get(), fmt::format("CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\n", server_port)));
    UniqueFd peer(::accept4(server.get(), nullptr, nullptr, SOCK_CLOEXEC));
    REQUIRE(peer.valid());
    char buf[64] {};
    const std::string_view established = "HTTP/1.1 200 Connection established\r\n\r\n";
    REQUIRE(::recv(client.get(), buf, established.size(), MSG_WAITALL) == static_cast<ssize_t>(established.size()));
    CHECK(std::string_view(buf, established.size()) == established);
    REQUIRE(write_all(client.get(), "ping"));
    REQUIRE(::recv(peer.get(), buf, 4, MSG_WAITALL) == 4);
    CHECK(std::string_view(buf, 4) == "ping");
    REQUIRE(write_all(peer.get(), "pong"));
    REQUIRE(::recv(client.get(), buf, 4, MSG_WAITALL) == 4);
    CHECK(std::string_view(buf, 4) == "pong");
    peer.reset();
    CHECK(read_to_end(client.get()).empty());  // the server's end passed on

    // A plain request to an unlisted port: 403, its words, recorded; nothing reached the other server.
    UniqueFd refused = connect_tcp(served_port);
    REQUIRE(write_all(refused.get(), fmt::format("GET http://127.0.0.1:{}/x HTTP/1.1\r\nHost: a\r\n\r\n", other_port)));
    const std::string answer = read_to_end(refused.get());
    CHECK(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"));
    CHECK(answer.find(fmt::format("qk refused 127.0.0.1:{} to task app:build", other_port)) != std::string::npos);
    CHECK(answer.find("its target") != std::string::npos);
    auto refusals = (*proxy)->remove_task(token);
    REQUIRE(refusals.size() == 1);
    CHECK(refusals[0].host == "127.0.0.1");
    CHECK(refusals[0].port == other_port);
    pollfd waiting {other.get(), POLLIN, 0};
    CHECK(::poll(&waiting, 1, 0) == 0);

    // An unknown token is refused, and the command would not start.
    UniqueFd stranger = connect_unix((*proxy)->socket_path());
    std::uint16_t p = 0;
    UniqueFd unserved = listen_loopback(p);
    auto handed = hand_listener_to_proxy(stranger.get(), unserved.get(), "not-a-token");
    REQUIRE_FALSE(handed);
    CHECK(handed.error().message.find("no task of this run has that token") != std::string::npos);
}
