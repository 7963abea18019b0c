// remote_policy: what a run does with the remote cache, from nx.json's qk.remoteCache, the environment's
// QK_REMOTE_CACHE_* (which win) and --remote-cache.
#include <catch2/catch.hpp>

#include "run/remote_policy.hpp"

using qk::RemoteCacheProtocol;
using qk::RemoteCacheSettings;
using qk::run::remote_policy;
using qk::workspace::RemoteCacheConfig;

namespace {

RemoteCacheConfig nx_with(std::string url)
{
    RemoteCacheConfig c;
    c.url = std::move(url);
    return c;
}

}  // namespace

TEST_CASE("remote_policy: no server named, no remote cache; a flag asking for one is an error", "[run][remote]")
{
    auto none = remote_policy({}, {}, "");
    REQUIRE(none);
    CHECK_FALSE(none->read);
    CHECK_FALSE(none->write);
    CHECK(remote_policy({}, {}, "off"));
    for (const char* flag : {"read", "readwrite"}) {
        auto asked = remote_policy({}, {}, flag);
        REQUIRE_FALSE(asked);
        CHECK(asked.error().message == std::string("--remote-cache=") + flag +
                                           " names no server: set QK_REMOTE_CACHE_URL, or \"qk\": {\"remoteCache\": "
                                           "{\"url\": ...}} in nx.json");
    }
}

TEST_CASE("remote_policy: readwrite by default, read when nx.json says readOnly, the flag over both", "[run][remote]")
{
    RemoteCacheConfig nx = nx_with("http://127.0.0.1:3000");
    auto p = remote_policy(nx, {}, "");
    REQUIRE(p);
    CHECK(p->read);
    CHECK(p->write);
    CHECK(p->server.url == "http://127.0.0.1:3000");
    CHECK(p->server.protocol.value_or(RemoteCacheProtocol::turbo) == RemoteCacheProtocol::turbo);

    nx.read_only = true;
    p = remote_policy(nx, {}, "");
    REQUIRE(p);
    CHECK(p->read);
    CHECK_FALSE(p->write);
    p = remote_policy(nx, {}, "readwrite");
    REQUIRE(p);
    CHECK(p->write);

    nx.read_only = false;
    p = remote_policy(nx, {}, "read");
    REQUIRE(p);
    CHECK(p->read);
    CHECK_FALSE(p->write);
    p = remote_policy(nx, {}, "off");
    REQUIRE(p);
    CHECK_FALSE(p->read);
    CHECK_FALSE(p->write);
}

TEST_CASE("remote_policy: the environment wins field by field; upload verified and trust any by default",
          "[run][remote]")
{
    RemoteCacheConfig nx = nx_with("http://from-nx:3000");
    nx.protocol = "bazel";
    nx.team = "team_nx";
    RemoteCacheSettings env;
    env.url = "http://from-env:9090";
    env.token = "t";
    auto p = remote_policy(nx, env, "");
    REQUIRE(p);
    CHECK(p->server.url == "http://from-env:9090");
    CHECK(p->server.protocol == RemoteCacheProtocol::bazel);  // unset in the environment: nx.json's
    CHECK(p->server.team == "team_nx");
    CHECK(p->server.token == "t");
    CHECK_FALSE(p->upload_any);
    CHECK(p->trust_any);

    env.protocol = RemoteCacheProtocol::turbo;
    env.team = "team_env";
    nx.upload = "any";
    nx.trust = "verified";
    p = remote_policy(nx, env, "");
    REQUIRE(p);
    CHECK(p->server.protocol == RemoteCacheProtocol::turbo);
    CHECK(p->server.team == "team_env");
    CHECK(p->upload_any);
    CHECK_FALSE(p->trust_any);
}
