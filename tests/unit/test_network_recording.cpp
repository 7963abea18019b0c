// The network in a recording: DNS messages read, strace's network lines decoded (raw and named forms, as
// strace 6.1 writes them), and the sink pairing a connected datagram socket's sends and receives with its
// connect: what was reached, what was looked up and what the name resolved to.
#include <string>

#include <catch2/catch.hpp>

#include "qk/record/recording_sink.hpp"
#include "record/dns_message.hpp"
#include "record/strace_parser.hpp"

using namespace qk::record;

namespace {

// dig's query for fetch.test (EDNS), and dnsmasq's answer: fetch.test A 127.0.0.1.
const std::string kQuery("\241\230\1 \0\1\0\0\0\0\0\1\5fetch\4test\0\0\1\0\1\0\0)\4\320\0\0\0\0\0\f\0\n\0\10\355k\367}\341@\260\204",
                         51);
const std::string kAnswer("\241\230\205\200\0\1\0\1\0\0\0\1\5fetch\4test\0\0\1\0\1\300\f\0\1\0\1\0\0\0\0\0\4\177\0\0\1\0\0)\4\320\0\0\0\0\0\0",
                          55);

Recording parse(std::initializer_list<std::string_view> lines)
{
    Recording rec;
    RecordingSink sink(rec);
    StraceParser parser(sink, "/qkt/w");
    for (auto line : lines) {
        auto s = parser.feed(line);
        INFO(line);
        CHECK(s.ok());
    }
    CHECK(parser.finish().ok());
    return rec;
}

}  // namespace

TEST_CASE("DNS messages: a query's name, an answer's addresses, and what is not DNS", "[record][network]")
{
    auto q = parse_dns_message(kQuery);
    REQUIRE(q);
    CHECK(q->question == "fetch.test");
    CHECK(q->addresses.empty());
    auto a = parse_dns_message(kAnswer);
    REQUIRE(a);
    CHECK(a->question == "fetch.test");
    CHECK(a->addresses == std::vector<std::string>{"127.0.0.1"});
    CHECK_FALSE(parse_dns_message("GET / HTTP/1.1\r\n"));
    CHECK_FALSE(parse_dns_message(kQuery.substr(0, 20)));  // cut inside the name
    auto cut = parse_dns_message(kAnswer.substr(0, 40));    // the answer cut: the question still read
    REQUIRE(cut);
    CHECK(cut->addresses.empty());
}

TEST_CASE("strace network lines: dig's lookup and a TCP connect, raw constants", "[record][strace][network]")
{
    Recording rec = parse({
        R"(100 socket(0x2, 0x2|0x80000, 0) = 14<socket:[3223101]>)",
        R"(100 connect(14<socket:[3223101]>, {sa_family=0x2, sin_port="\x15\x17", sin_addr="\x7f\x00\x00\x01"}, 16) = 0)",
        R"(100 sendmmsg(14<socket:[3223101]>, [{msg_hdr={msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="\241\230\1 \0\1\0\0\0\0\0\1\5fetch\4test\0\0\1\0\1\0\0)\4\320\0\0\0\0\0\f\0\n\0\10\355k\367}\341@\260\204", iov_len=51}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, msg_len=51}], 1, 0) = 1)",
        R"(100 recvmsg(14<socket:[3223101]>, {msg_name={sa_family=0x2, sin_port="\x15\x17", sin_addr="\x7f\x00\x00\x01"}, msg_namelen=128 => 16, msg_iov=[{iov_base="\241\230\205\200\0\1\0\1\0\0\0\1\5fetch\4test\0\0\1\0\1\300\f\0\1\0\1\0\0\0\0\0\4\177\0\0\1\0\0)\4\320\0\0\0\0\0\0", iov_len=1310700}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 55)",
        R"(100 socket(0x2, 0x1|0x80000, 0) = 4<socket:[3229898]>)",
        R"(100 connect(4<socket:[3229898]>, {sa_family=0x2, sin_port="\x00\x50", sin_addr="\x7f\x00\x00\x01"}, 16) = -1 ECONNREFUSED (Connection refused))",
        R"(100 sendto(4<socket:[3229898]>, "GET / HTTP/1.1\r\n", 16, 0, NULL, 0) = 16)",
        R"(100 +++ exited with 0 +++)",
    });
    const NetworkUse& net = rec.network();
    CHECK(net.lookups() == std::set<std::string>{"fetch.test"});
    CHECK(net.host_of("127.0.0.1") == "fetch.test");
    REQUIRE(net.endpoints().size() == 2);
    auto dns = net.endpoints().find(Endpoint{"127.0.0.1", 5399, true});
    REQUIRE(dns != net.endpoints().end());
    CHECK(dns->second.reached);
    CHECK(dns->second.pid == 100);
    auto tcp = net.endpoints().find(Endpoint{"127.0.0.1", 80, false});
    REQUIRE(tcp != net.endpoints().end());
    CHECK_FALSE(tcp->second.reached);  // refused, still an attempt
    CHECK(tcp->second.count == 1);     // a stream's send is no event
}

TEST_CASE("strace network lines: named constants, IPv6, unix sockets left out", "[record][strace][network]")
{
    Recording rec = parse({
        R"(7 socket(AF_INET6, SOCK_DGRAM|SOCK_CLOEXEC, IPPROTO_IP) = 3<socket:[3229081]>)",
        R"(7 sendto(3<socket:[3229081]>, "x", 1, 0, {sa_family=AF_INET6, sin6_port=htons(9), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 1)",
        R"(7 socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_IP) = 5<socket:[1]>)",
        R"(7 connect(5<socket:[1]>, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("104.16.1.34")}, 16) = -1 EINPROGRESS (Operation now in progress))",
        R"(7 socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0) = 6<socket:[2]>)",
        R"(7 connect(6<socket:[2]>, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110) = 0)",
        R"(7 +++ exited with 0 +++)",
    });
    const auto& eps = rec.network().endpoints();
    REQUIRE(eps.size() == 2);
    CHECK(eps.count(Endpoint{"::1", 9, true}) == 1);
    auto https = eps.find(Endpoint{"104.16.1.34", 443, false});
    REQUIRE(https != eps.end());
    CHECK(https->second.reached);  // EINPROGRESS: a non-blocking connect under way
    CHECK(rec.network().host_of("104.16.1.34").empty());
}

TEST_CASE("strace network lines: a send that failed is listed, not reached, without its payload; a receive "
          "that got nothing is not", "[record][strace][network]")
{
    Recording rec = parse({
        R"(8 socket(AF_INET, SOCK_DGRAM|SOCK_CLOEXEC, IPPROTO_IP) = 3<socket:[9]>)",
        R"(8 sendto(3<socket:[9]>, "\241\230\1 \0\1\0\0\0\0\0\1\5fetch\4test\0\0\1\0\1\0\0)\4\320\0\0\0\0\0\f\0\n\0\10\355k\367}\341@\260\204", 51, 0, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("192.0.2.53")}, 16) = -1 ENETUNREACH (Network is unreachable))",
        R"(8 recvfrom(3<socket:[9]>, 0x7ffd, 512, 0, 0x7ffe, 0x7fff) = -1 EAGAIN (Resource temporarily unavailable))",
        // Would block: tried again, refusing nothing, and not listed (a busy loop of them must not count).
        R"(8 sendto(3<socket:[9]>, "x", 1, MSG_DONTWAIT, {sa_family=AF_INET, sin_port=htons(9), sin_addr=inet_addr("192.0.2.9")}, 16) = -1 EAGAIN (Resource temporarily unavailable))",
        R"(8 +++ exited with 0 +++)",
    });
    const auto& eps = rec.network().endpoints();
    REQUIRE(eps.size() == 1);
    auto dns = eps.find(Endpoint{"192.0.2.53", 53, true});
    REQUIRE(dns != eps.end());
    CHECK_FALSE(dns->second.reached);
    CHECK(rec.network().lookups().empty());  // what the eBPF recorder sees of it too: no payload
}

TEST_CASE("recordings merge their network use", "[record][network]")
{
    Recording a, b;
    a.network().add({"10.0.0.1", 443, false}, 1, false);
    a.network().add_lookup("x.example.com");
    b.network().add({"10.0.0.1", 443, false}, 2, true);
    b.network().add_answer("10.0.0.1", "x.example.com");
    a.merge(b);
    const auto& use = a.network().endpoints().at(Endpoint{"10.0.0.1", 443, false});
    CHECK(use.count == 2);
    CHECK(use.reached);
    CHECK(use.pid == 1);
    CHECK(a.network().host_of("10.0.0.1") == "x.example.com");
}

TEST_CASE("strace's trace list names the network calls it decodes", "[record][strace][network]")
{
    const std::string list = "," + std::string(StraceParser::traced_syscalls()) + ",";
    for (const char* name : {"socket", "connect", "sendto", "sendmsg", "sendmmsg", "recvfrom", "recvmsg"}) {
        CHECK(StraceParser::decodes_network(name));
        CHECK_THAT(list, Catch::Contains(std::string(",") + name + ","));
    }
    CHECK_FALSE(StraceParser::decodes_network("send"));  // not a system call on x86_64: sendto
}
