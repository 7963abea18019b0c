// What a task reached on the network, judged by its declared network (audit::classify_network): allowed
// and listed (everything when undeclared), the machine's own apart and never judged, the rest outside a
// declared false or list going beyond; and the "host:port" entries the report, rejudge and fix share.
#include <catch2/catch.hpp>

#include "qk/audit/classify.hpp"
#include "qk/audit/finding_kinds.hpp"
#include "qk/audit/network_findings.hpp"
#include "qk/audit/rejudge.hpp"
#include "rules_workspace.hpp"

using namespace qk;
using audit::TaskFindings;
using workspace::NetworkDeclaration;
using Mode = NetworkDeclaration::Mode;
using Strings = std::vector<std::string>;

namespace {

NetworkDeclaration declared(Mode mode, std::initializer_list<const char*> patterns = {})
{
    NetworkDeclaration d;
    d.mode = mode;
    for (const char* p : patterns) {
        auto parsed = workspace::parse_host_pattern(p);
        REQUIRE(parsed.ok());
        d.hosts.push_back(*parsed);
    }
    return d;
}

// A task that looked up registry.example.com (answered 198.51.100.7) and fetched from it over TCP, sent a
// datagram to 192.0.2.1:9, asked a resolver off the machine, and reached a server on its own loopback.
record::NetworkUse used()
{
    record::NetworkUse u;
    u.add_lookup("registry.example.com");
    u.add_answer("198.51.100.7", "registry.example.com");
    u.add({"198.51.100.7", 443, false}, 10, true);
    u.add({"198.51.100.7", 443, false}, 10, true);
    u.add({"192.0.2.1", 9, true}, 11, true);
    u.add({"2001:db8::53", 53, true}, 12, false);
    u.add({"127.0.0.1", 8080, false}, 10, true);
    return u;
}

TaskFindings classified(const NetworkDeclaration& d)
{
    TaskFindings f;
    audit::classify_network(used(), d, f);
    f.normalise();
    return f;
}

}  // namespace

TEST_CASE("classify_network: undeclared, everything off the machine is listed, not counted; loopback apart",
          "[audit][network]")
{
    for (Mode open : {Mode::undeclared, Mode::any}) {
        TaskFindings f = classified(declared(open));
        CHECK(f.network == Strings{"192.0.2.1:9", "[2001:db8::53]:53", "registry.example.com:443"});
        CHECK(f.loopback_network == Strings{"127.0.0.1:8080"});
        CHECK(f.undeclared_network.empty());
        CHECK_FALSE(f.went_beyond());
        CHECK_FALSE(f.empty());  // listed: the task is not "clean" of network use, it kept to what it declares
        TaskFindings::Connection tls{"registry.example.com:443", "198.51.100.7", 443, false,
                                     "registry.example.com", 2, true};
        CHECK(std::find(f.connections.begin(), f.connections.end(), tls) != f.connections.end());
        CHECK(f.connections.size() == 4);
    }
}

TEST_CASE("classify_network: outside a declared false or list goes beyond; loopback never", "[audit][network]")
{
    TaskFindings none = classified(declared(Mode::none));
    CHECK(none.network.empty());
    CHECK(none.undeclared_network == Strings{"192.0.2.1:9", "[2001:db8::53]:53", "registry.example.com:443"});
    CHECK(none.loopback_network == Strings{"127.0.0.1:8080"});
    CHECK(none.went_beyond());

    // By the name it looked up, or by the address it reached: a list may name either.
    TaskFindings by_name = classified(declared(Mode::hosts, {"*.example.com:443", "192.0.2.1"}));
    CHECK(by_name.network == Strings{"192.0.2.1:9", "registry.example.com:443"});
    CHECK(by_name.undeclared_network == Strings{"[2001:db8::53]:53"});
    TaskFindings by_address = classified(declared(Mode::hosts, {"198.51.100.7:443"}));
    CHECK(by_address.network == Strings{"registry.example.com:443"});
    // A port the pattern does not name is outside it.
    TaskFindings wrong_port = classified(declared(Mode::hosts, {"registry.example.com:80"}));
    CHECK(std::find(wrong_port.undeclared_network.begin(), wrong_port.undeclared_network.end(),
                    "registry.example.com:443") != wrong_port.undeclared_network.end());
}

TEST_CASE("network entries: written and read back, an IPv6 address in brackets", "[audit][network]")
{
    CHECK(audit::network_entry("example.com", 443) == "example.com:443");
    CHECK(audit::network_entry("::1", 80) == "[::1]:80");
    auto v6 = audit::parse_network_entry("[2001:db8::1]:8080");
    REQUIRE(v6);
    CHECK(v6->host == "2001:db8::1");
    CHECK(v6->port == 8080);
    auto name = audit::parse_network_entry("registry.npmjs.org:443");
    REQUIRE(name);
    CHECK(name->host == "registry.npmjs.org");
    for (const char* bad : {"example.com", "example.com:", "example.com:0", "example.com:70000", "2001:db8::1:80",
                            "[::1:80", ":80", "example.com:8x"})
        CHECK_FALSE(audit::parse_network_entry(bad));
}

TEST_CASE("network entries: allowed by the name, or by an address a connection reached it at", "[audit][network]")
{
    TaskFindings f = classified(declared(Mode::none));
    const NetworkDeclaration by_address = declared(Mode::hosts, {"198.51.100.7"});
    CHECK(audit::network_entry_allowed(by_address, f, "registry.example.com:443"));
    CHECK_FALSE(audit::network_entry_allowed(by_address, TaskFindings{}, "registry.example.com:443"));
    CHECK_FALSE(audit::network_entry_allowed(declared(Mode::none), f, "registry.example.com:443"));
    CHECK(audit::network_entry_allowed(declared(Mode::undeclared), f, "not an entry"));
}

TEST_CASE("rejudge: network entries asked again of the declaration, allowed where it is open", "[audit][rejudge]")
{
    test::RulesWorkspace ws;
    auto rules = ws.rules_of("app:build");  // declares no network: open
    REQUIRE(rules);
    TaskFindings found = classified(declared(Mode::none));
    audit::Rejudged r = audit::rejudge(found, *rules, ws.dir.path.string());
    // What a false declaration counted, an open network lets through: listed as allowed, not counted.
    CHECK(r.allowed.undeclared_network == found.undeclared_network);
    CHECK(r.still.undeclared_network.empty());
    CHECK(r.ok());
    // The machine's own is not asked again.
    CHECK(r.allowed.loopback_network.empty());
    CHECK(r.covered.loopback_network.empty());
}

TEST_CASE("classify: a recording's network judged by the task's rules, beside its files", "[audit][classify][network]")
{
    test::RulesWorkspace ws;
    auto rules = ws.rules_of("app:build");  // declares no network: open
    REQUIRE(rules);
    record::Recording rec;
    rec.add(ws.abs("other/notes.txt"), record::kRead);
    rec.network().add({"192.0.2.1", 9, true}, 10, true);
    rec.network().add({"127.0.0.1", 80, false}, 10, false);
    TaskFindings f = audit::classify(rec, *rules, ws.session->workspace());
    CHECK(f.reads_outside_inputs == Strings{"other/notes.txt"});
    CHECK(f.network == Strings{"192.0.2.1:9"});
    CHECK(f.loopback_network == Strings{"127.0.0.1:80"});
    CHECK(f.undeclared_network.empty());
    CHECK(rules->network().mode == Mode::undeclared);
}

TEST_CASE("rules: the target's declared network, or the workspace's, is what classify and rejudge ask",
          "[audit][rejudge][network]")
{
    test::RulesWorkspace ws;
    // The workspace declares false for every target without a network of its own; app's lint names a list.
    std::string nx = R"({"qk": {"sandbox": {"network": false}},
  "namedInputs": { "default": ["{projectRoot}/**/*"], "production": ["default", "!{projectRoot}/**/*.spec.ts"] },
  "targetDefaults": { "build": { "dependsOn": ["^build"], "inputs": ["production"], "outputs": ["{projectRoot}/dist"] },
                      "lint": { "qk:sandbox": { "network": ["*.example.com:443"] } } } })";
    ws.dir.write("nx.json", nx);
    auto s = key::Session::open(ws.dir.path);
    REQUIRE(s);
    ws.session = std::move(s).value();
    workspace::TaskRequest request;
    request.targets = {"build", "lint"};
    request.projects = {"app"};
    REQUIRE(ws.session->plan(request));
    for (std::size_t i = 0; i < ws.session->tasks().tasks().size(); ++i)
        REQUIRE(ws.session->keys().key(i));
    auto build = ws.rules_of("app:build");
    auto lint = ws.rules_of("app:lint");
    REQUIRE(build);
    REQUIRE(lint);
    CHECK(build->network().mode == Mode::none);
    CHECK(lint->network().mode == Mode::hosts);

    TaskFindings found = classified(declared(Mode::undeclared));  // as an open network listed them
    audit::Rejudged under_false = audit::rejudge(found, *build, ws.dir.path.string());
    CHECK(under_false.still.undeclared_network ==
          Strings{"192.0.2.1:9", "[2001:db8::53]:53", "registry.example.com:443"});
    CHECK_FALSE(under_false.ok());
    audit::Rejudged under_list = audit::rejudge(found, *lint, ws.dir.path.string());
    CHECK(under_list.covered.network == Strings{"registry.example.com:443"});
    CHECK(under_list.still.undeclared_network == Strings{"192.0.2.1:9", "[2001:db8::53]:53"});

    record::Recording rec;
    rec.network() = used();
    TaskFindings judged = audit::classify(rec, *lint, ws.session->workspace());
    CHECK(judged.network == Strings{"registry.example.com:443"});
    CHECK(judged.undeclared_network == Strings{"192.0.2.1:9", "[2001:db8::53]:53"});
}

TEST_CASE("refused_network_attempts: under a declared false or list, what had no route and a failed loopback "
          "connection are refusals; an open network none",
          "[audit][network]")
{
    record::NetworkUse u = used();
    u.add({"127.0.0.1", 5432, false}, 13, false);  // the machine's database: the namespace's loopback has none
    u.add({"127.0.0.1", 5353, true}, 13, false);   // a datagram sent says nothing of who listens
    for (Mode isolated : {Mode::none, Mode::hosts}) {
        TaskFindings f;
        audit::refused_network_attempts(u, declared(isolated, {"registry.example.com"}), f);
        f.normalise();
        CHECK(f.refused_network ==
              Strings{"127.0.0.1:5432", "192.0.2.1:9", "[2001:db8::53]:53", "registry.example.com:443"});
        CHECK(f.refused());
    }
    for (Mode open : {Mode::undeclared, Mode::any}) {
        TaskFindings f;
        audit::refused_network_attempts(u, declared(open), f);
        CHECK(f.refused_network.empty());
    }
}
