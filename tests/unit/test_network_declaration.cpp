// "qk:sandbox": { "network": ... }: on a target, from targetDefaults, nx.json's qk.sandbox.network as the
// workspace's default, undeclared otherwise; each pattern's syntax and each wrong shape said with its file,
// line and what to write instead.
#include <catch2/catch.hpp>

#include "qk/workspace/network.hpp"
#include "qk/workspace/workspace.hpp"
#include "test_support.hpp"

using namespace qk::workspace;
using Mode = NetworkDeclaration::Mode;

namespace {

// A workspace of one project "app" whose project.json is `project_json`, under `nx_json`.
qk::Result<Workspace> load_with(const qk::test::TempDir& dir, const std::string& nx_json,
                                const std::string& project_json)
{
    dir.write("nx.json", nx_json);
    dir.write("app/project.json", project_json);
    return Workspace::load(dir.path);
}

std::string load_error(const std::string& nx_json, const std::string& project_json)
{
    qk::test::TempDir dir;
    auto ws = load_with(dir, nx_json, project_json);
    REQUIRE_FALSE(ws.ok());
    return ws.error().message;
}

std::string target_json(const std::string& sandbox)
{
    return R"({"name": "app", "targets": {"build": {"command": "true", "qk:sandbox": )" + sandbox + "}}}";
}

}  // namespace

TEST_CASE("host patterns: names, wildcards, ports and addresses", "[workspace]")
{
    auto p = parse_host_pattern("Registry.NPMjs.org.");
    REQUIRE(p.ok());
    CHECK(p->host == "registry.npmjs.org");
    CHECK_FALSE(p->subdomains);
    CHECK(p->port == 0);
    CHECK(p->text == "Registry.NPMjs.org.");

    auto w = parse_host_pattern("*.example.com:443");
    REQUIRE(w.ok());
    CHECK(w->host == "example.com");
    CHECK(w->subdomains);
    CHECK(w->port == 443);

    auto v4 = parse_host_pattern("127.0.0.1:8080");
    REQUIRE(v4.ok());
    CHECK(v4->host == "127.0.0.1");
    CHECK(v4->port == 8080);
    auto v6 = parse_host_pattern("[::1]:8080");
    REQUIRE(v6.ok());
    CHECK(v6->host == "::1");
    CHECK(v6->port == 8080);
}

TEST_CASE("host patterns: each mistake says what to write", "[workspace]")
{
    auto message = [](std::string_view text) {
        auto p = parse_host_pattern(text);
        REQUIRE_FALSE(p.ok());
        return p.error().message;
    };
    CHECK_THAT(message("https://registry.npmjs.org/"), Catch::Contains("without a scheme or a path"));
    CHECK_THAT(message("example.com:0"), Catch::Contains("a number from 1 to 65535"));
    CHECK_THAT(message("example.com:70000"), Catch::Contains("a number from 1 to 65535"));
    CHECK_THAT(message("example.com:https"), Catch::Contains("such as \"example.com:443\""));
    CHECK_THAT(message("example.com:"), Catch::Contains("a number from 1 to 65535"));
    CHECK_THAT(message("*"), Catch::Contains("declare \"network\": true"));
    CHECK_THAT(message("*:443"), Catch::Contains("declare \"network\": true"));
    CHECK_THAT(message("a.*.com"), Catch::Contains("only taken as the whole first label"));
    CHECK_THAT(message("*example.com"), Catch::Contains("only taken as the whole first label"));
    CHECK_THAT(message("exa mple.com"), Catch::Contains("is not a host name"));
    CHECK_THAT(message("a..com"), Catch::Contains("is not a host name"));
    CHECK_THAT(message("::1"), Catch::Contains("in brackets"));
    CHECK_THAT(message("[::1"), Catch::Contains("needs its \"]\""));
    CHECK_THAT(message("[zz]"), Catch::Contains("is not an IPv6 address"));
    CHECK_THAT(message("[::1]x"), Catch::Contains("only \":port\""));
}

TEST_CASE("network on a target, from targetDefaults, from nx.json's qk section, undeclared", "[workspace]")
{
    qk::test::TempDir dir;
    dir.write("lib/project.json", R"({"name": "lib", "targets": {"build": {"command": "true"},
        "test": {"command": "true", "qk:sandbox": {"scratch": ["{projectRoot}/.c"]}}}})");
    auto ws = load_with(dir, R"({"targetDefaults": {"lint": {"qk:sandbox": {"network": false}}},
        "qk": {"sandbox": {"network": ["registry.npmjs.org"]}}})",
                        R"({"name": "app", "targets": {
        "build": {"command": "true", "qk:sandbox": {"network": ["*.example.com:443", "127.0.0.1"]}},
        "fetch": {"command": "true", "qk:sandbox": {"network": true}},
        "lint": {"command": "true"}}})");
    INFO((ws.ok() ? std::string() : ws.error().message));
    REQUIRE(ws.ok());

    const NetworkDeclaration& build = (*ws->target("app", "build"))->sandbox.network;
    CHECK(build.mode == Mode::hosts);
    CHECK(build.source == "target");
    REQUIRE(build.hosts.size() == 2);
    CHECK(build.hosts[0].text == "*.example.com:443");
    CHECK(build.hosts[1].host == "127.0.0.1");
    CHECK((*ws->target("app", "fetch"))->sandbox.network.mode == Mode::any);
    const NetworkDeclaration& lint = (*ws->target("app", "lint"))->sandbox.network;
    CHECK(lint.mode == Mode::none);
    CHECK(lint.source == "target");  // targetDefaults' is the target's own
    // No network of its own (a qk:sandbox without one included): the workspace's default.
    for (const char* name : {"build", "test"}) {
        const NetworkDeclaration& d = (*ws->target("lib", name))->sandbox.network;
        CHECK(d.mode == Mode::hosts);
        CHECK(d.source == "workspace");
        REQUIRE(d.hosts.size() == 1);
        CHECK(d.hosts[0].host == "registry.npmjs.org");
    }

    qk::test::TempDir plain;
    auto open = load_with(plain, "{}", target_json("{\"scratch\": []}"));
    REQUIRE(open.ok());
    const NetworkDeclaration& undeclared = (*open->target("app", "build"))->sandbox.network;
    CHECK(undeclared.mode == Mode::undeclared);
    CHECK(undeclared.open());
    CHECK(undeclared.source.empty());
}

TEST_CASE("network: a wrong shape or pattern names its file, line and what to write", "[workspace]")
{
    CHECK_THAT(load_error("{}", target_json(R"({"network": "registry.npmjs.org"})")),
               Catch::Contains("app/project.json:1:") && Catch::Contains("targets.build.qk:sandbox.network must be") &&
                   Catch::Contains("false, true or a list of hosts") &&
                   Catch::Contains("found the string \"registry.npmjs.org\""));
    CHECK_THAT(load_error("{}", target_json(R"({"network": ["ok.com", 443]})")),
               Catch::Contains("targets.build.qk:sandbox.network[1] must be a host"));
    CHECK_THAT(load_error("{}", target_json(R"({"network": ["ok.com", "bad.com:99999"]})")),
               Catch::Contains("app/project.json:1:") && Catch::Contains("qk:sandbox.network[1]: \"bad.com:99999\"") &&
                   Catch::Contains("from 1 to 65535"));
    CHECK_THAT(load_error(R"({"targetDefaults": {"build": {"qk:sandbox": {"network": ["http://x.com"]}}}})", "{}"),
               Catch::Contains("nx.json:1:") && Catch::Contains("targetDefaults.build.qk:sandbox.network[0]") &&
                   Catch::Contains("without a scheme"));
    CHECK_THAT(load_error(R"({"qk": {"sandbox": {"network": 1}}})", "{}"),
               Catch::Contains("nx.json:1:") && Catch::Contains("qk.sandbox.network must be"));
    CHECK_THAT(load_error(R"({"qk": {"sandbox": false}})", "{}"), Catch::Contains("qk.sandbox must be an object"));
    CHECK_THAT(load_error(R"({"qk": {"sandbox": {"scratch": []}}})", "{}"),
               Catch::Contains("qk.sandbox has no setting \"scratch\"") && Catch::Contains("it takes network"));
}
