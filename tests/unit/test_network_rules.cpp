// rules::network_allows, the one answer to "may this task reach this host on this port", and is_loopback.
#include <cstdint>

#include <catch2/catch.hpp>

#include "qk/rules/network.hpp"

using namespace qk;
using workspace::NetworkDeclaration;
using Mode = NetworkDeclaration::Mode;

namespace {

NetworkDeclaration list(std::initializer_list<const char*> patterns)
{
    NetworkDeclaration d;
    d.mode = Mode::hosts;
    for (const char* p : patterns) {
        auto parsed = workspace::parse_host_pattern(p);
        REQUIRE(parsed.ok());
        d.hosts.push_back(*parsed);
    }
    return d;
}

}  // namespace

TEST_CASE("network_allows: undeclared and true allow all, false nothing", "[rules][network]")
{
    NetworkDeclaration d;
    CHECK(rules::network_allows(d, "example.com", 443));
    d.mode = Mode::any;
    CHECK(rules::network_allows(d, "10.1.2.3", 22));
    d.mode = Mode::none;
    CHECK_FALSE(rules::network_allows(d, "example.com", 443));
    CHECK_FALSE(rules::network_allows(d, "example.com", 0));
}

TEST_CASE("network_allows: a list by name, wildcard, port and address", "[rules][network]")
{
    const NetworkDeclaration d = list({"registry.npmjs.org", "*.example.com:443", "127.0.0.1:8080", "[::1]"});
    struct Case {
        const char* host;
        std::uint16_t port;
        bool allowed;
    };
    const Case cases[] = {
        {"registry.npmjs.org", 443, true},
        {"REGISTRY.npmjs.org.", 80, true},
        {"npmjs.org", 443, false},
        {"evil-registry.npmjs.org", 443, false},
        {"cdn.example.com", 443, true},
        {"a.b.example.com", 443, true},
        {"cdn.example.com", 80, false},
        {"example.com", 443, false},  // the wildcard is for names under it
        {"badexample.com", 443, false},
        {"cdn.example.com", 0, true},  // a lookup asks for the name, whatever the port
        {"127.0.0.1", 8080, true},
        {"::ffff:127.0.0.1", 8080, true},
        {"127.0.0.1", 8081, false},
        {"::1", 5432, true},
        {"[::1]", 5432, true},
        {"::2", 5432, false},
    };
    for (const Case& c : cases) {
        INFO(c.host << ":" << c.port);
        CHECK(rules::network_allows(d, c.host, c.port) == c.allowed);
    }
    CHECK_FALSE(rules::network_allows(list({}), "registry.npmjs.org", 443));
}

TEST_CASE("is_loopback: 127/8, ::1, mapped and localhost", "[rules][network]")
{
    CHECK(rules::is_loopback("127.0.0.1"));
    CHECK(rules::is_loopback("127.0.0.53"));
    CHECK(rules::is_loopback("::1"));
    CHECK(rules::is_loopback("::ffff:127.0.0.1"));
    CHECK(rules::is_loopback("LocalHost"));
    CHECK_FALSE(rules::is_loopback("10.0.0.1"));
    CHECK_FALSE(rules::is_loopback("::"));
    CHECK_FALSE(rules::is_loopback("1270.0.0.1"));
}
