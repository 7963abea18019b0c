// remote_policy: what a run does with the remote cache, from nx.json's qk.remoteCache, the environment's
// QK_REMOTE_CACHE_* (which win) and --remote-cache; and RemoteShare's uploads when the run is stopped.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>

#include "run/output_display.hpp"
#include "qk/run/remote_policy.hpp"
#include "qk/workspace/workspace.hpp"
#include "run/remote_share.hpp"
#include "test_support.hpp"

using qk::RemoteCacheSettings;
using qk::remote::Protocol;
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
    CHECK(p->server.protocol == Protocol::turbo);

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
    CHECK(p->server.protocol == Protocol::bazel);  // unset in the environment: nx.json's
    CHECK(p->server.team == "team_nx");
    CHECK(p->server.token == "t");
    CHECK_FALSE(p->upload_any);
    CHECK(p->trust_any);

    env.protocol = "turbo";
    env.team = "team_env";
    nx.upload = "any";
    nx.trust = "verified";
    p = remote_policy(nx, env, "");
    REQUIRE(p);
    CHECK(p->server.protocol == Protocol::turbo);
    CHECK(p->server.team == "team_env");
    CHECK(p->upload_any);
    CHECK_FALSE(p->trust_any);
}

TEST_CASE("remote_policy: nx.json's server is checked as the environment's, by the file and position that set it",
          "[run][remote]")
{
    qk::test::TempDir dir;
    dir.write("nx.json", R"({"qk": {"remoteCache": {"protocol": "s3"}}})");
    auto ws = qk::workspace::Workspace::load(dir.path);
    REQUIRE(ws);  // the workspace's model holds it as written: the names are src/remote's
    auto p = remote_policy(ws->nx().remote_cache, {}, "");
    REQUIRE_FALSE(p);
    CHECK(p.error().message ==
          "nx.json:1:37: qk.remoteCache.protocol must be \"turbo\" (Turborepo's API) or \"bazel\" (Bazel's HTTP "
          "cache), found the string \"s3\"");

    dir.write("nx.json", R"({"qk": {"remoteCache": {"url": "http://h", "protocol": "bazel"}}})");
    dir.write("nx.local.json", R"({"qk": {"remoteCache": {"url": "ftp://h"}}})");
    ws = qk::workspace::Workspace::load(dir.path);
    REQUIRE(ws);
    p = remote_policy(ws->nx().remote_cache, {}, "");
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::StartsWith("nx.local.json:1:32: qk.remoteCache.url 'ftp://h' must be"));
}

namespace {

// A server whose first upload waits until the test lets it go: what a stalled upload looks like to the run.
class HeldServer : public qk::remote::RemoteCache {
public:
    qk::Result<qk::remote::Lookup> exists(std::string_view) const override { return qk::remote::Lookup::miss; }
    qk::Result<qk::remote::Lookup> get(std::string_view, const qk::remote::Sink&) const override
    {
        return qk::remote::Lookup::miss;
    }
    qk::Status put(std::string_view key, const qk::remote::Source&) const override
    {
        std::unique_lock lock(m_);
        started_.push_back(std::string(key));
        changed_.notify_all();
        changed_.wait(lock, [&] { return released_; });
        return {};
    }
    std::string describe() const override { return "held"; }

    void wait_started(std::size_t n) const
    {
        std::unique_lock lock(m_);
        changed_.wait(lock, [&] { return started_.size() >= n; });
    }
    void release() const
    {
        std::lock_guard lock(m_);
        released_ = true;
        changed_.notify_all();
    }
    std::size_t started() const
    {
        std::lock_guard lock(m_);
        return started_.size();
    }

private:
    mutable std::mutex m_;
    mutable std::condition_variable changed_;
    mutable std::vector<std::string> started_;
    mutable bool released_ = false;
};

// `n` results of task `id` stored in `cache`, each a file of its own in `dir`: their keys.
std::vector<qk::key::Hash128> stored(const qk::test::TempDir& dir, qk::key::LocalCache& cache, const std::string& id,
                                     int n)
{
    std::vector<qk::key::Hash128> hashes;
    for (int i = 0; i < n; ++i) {
        const std::string out = "out" + std::to_string(i) + ".txt";
        dir.write(out, "result " + std::to_string(i));
        hashes.push_back(qk::key::hash_bytes(id + " key " + std::to_string(i)));
        REQUIRE(cache.store(hashes.back(), {id, {out}, "", {}, "test", {}}));
    }
    return hashes;
}

}  // namespace

TEST_CASE("RemoteShare: a cancelled run sends no upload it had not started; a finished one sends all",
          "[run][remote]")
{
    for (bool cancelled : {true, false}) {
        qk::test::TempDir dir("qk-remote-share");
        auto cache = qk::or_fatal(qk::key::LocalCache::open(dir.path));
        const std::vector<qk::key::Hash128> hashes = stored(dir, cache, "t:build", 6);
        std::string shown;
        qk::run::OutputDisplay display({"t:build"}, [&](std::string_view s) { shown += s; });
        auto server = std::make_unique<HeldServer>();
        const HeldServer& held = *server;
        qk::run::RemotePolicy policy;
        policy.read = policy.write = policy.upload_any = true;
        qk::run::RemoteShare share(std::move(server), policy, cache, display);
        for (const auto& h : hashes)
            share.upload(h, "t:build", qk::run::ShareVerdict::not_sandboxed);
        held.wait_started(2);  // both uploaders busy, four uploads queued
        if (cancelled)
            share.cancel();
        held.release();
        share.finish();
        CHECK(held.started() == (cancelled ? 2u : 6u));
        const qk::run::RemoteTally tally = share.tally();
        CHECK(tally.uploaded == (cancelled ? 2u : 6u));
        // What a stop left unsent is counted, for the summary to say.
        CHECK(tally.kept.count(qk::run::KeptLocal::interrupted) == (cancelled ? 1u : 0u));
        if (cancelled)
            CHECK(tally.kept.at(qk::run::KeptLocal::interrupted) == 4u);
    }
}

TEST_CASE("RemoteShare: uploadNetwork false keeps the results of tasks that declare their network, counted",
          "[run][remote]")
{
    for (bool upload_network : {false, true}) {
        qk::test::TempDir dir("qk-remote-share");
        auto cache = qk::or_fatal(qk::key::LocalCache::open(dir.path));
        const std::vector<qk::key::Hash128> hashes = stored(dir, cache, "t:fetch", 3);
        qk::run::OutputDisplay display({"t:fetch"}, [](std::string_view) {});
        auto server = std::make_unique<HeldServer>();
        const HeldServer& held = *server;
        held.release();  // nothing is held here: every upload goes through at once
        qk::run::RemotePolicy policy;
        policy.read = policy.write = true;
        policy.upload_network = upload_network;
        qk::run::RemoteShare share(std::move(server), policy, cache, display);
        share.upload(hashes[0], "t:fetch", qk::run::ShareVerdict::verified, true);
        share.upload(hashes[1], "t:fetch", qk::run::ShareVerdict::verified, false);
        // Going beyond is said first: it would not be shared whatever the network.
        share.upload(hashes[2], "t:fetch", qk::run::ShareVerdict::went_beyond, true);
        share.finish();
        const qk::run::RemoteTally tally = share.tally();
        CHECK(held.started() == (upload_network ? 2u : 1u));
        CHECK(tally.uploaded == (upload_network ? 2u : 1u));
        CHECK(tally.kept.count(qk::run::KeptLocal::network) == (upload_network ? 0u : 1u));
        CHECK(tally.kept.at(qk::run::KeptLocal::went_beyond) == 1u);
    }
}

TEST_CASE("remote_policy: uploadNetwork from nx.json, true when unset", "[run][remote]")
{
    RemoteCacheConfig nx = nx_with("http://127.0.0.1:3000");
    auto p = remote_policy(nx, {}, "");
    REQUIRE(p);
    CHECK(p->upload_network);
    nx.upload_network = false;
    p = remote_policy(nx, {}, "");
    REQUIRE(p);
    CHECK_FALSE(p->upload_network);
}
