// nx.json's "qk" section: qk.remoteCache read with each field, checked with file:line:column, and a token or
// signing key in the file refused (a committed file is read by everyone with the repository).
#include <catch2/catch.hpp>

#include "qk/workspace/workspace.hpp"
#include "test_support.hpp"

using namespace qk::workspace;

namespace {

qk::Result<Workspace> load_with(const qk::test::TempDir& dir, const std::string& nx_json)
{
    dir.write("nx.json", nx_json);
    return Workspace::load(dir.path);
}

std::string load_error(const std::string& nx_json)
{
    qk::test::TempDir dir;
    auto ws = load_with(dir, nx_json);
    REQUIRE_FALSE(ws.ok());
    return ws.error().message;
}

}  // namespace

TEST_CASE("nx.json qk.remoteCache: each field read, none when absent", "[workspace]")
{
    qk::test::TempDir dir;
    auto ws = load_with(dir, R"({"qk": {"remoteCache": {"url": "http://127.0.0.1:3000", "protocol": "bazel",
        "team": "team_ci", "readOnly": true, "upload": "any", "trust": "verified"}}})");
    INFO((ws.ok() ? std::string() : ws.error().message));
    REQUIRE(ws.ok());
    const RemoteCacheConfig& rc = ws->nx().remote_cache;
    CHECK(rc.url == "http://127.0.0.1:3000");
    CHECK(rc.protocol == "bazel");
    CHECK(rc.team == "team_ci");
    CHECK(rc.read_only == true);
    CHECK(rc.upload == "any");
    CHECK(rc.trust == "verified");
    CHECK_FALSE(rc.upload_network.has_value());  // unset: results of tasks declaring their network are shared
    auto network = load_with(dir, R"({"qk": {"remoteCache": {"url": "http://h", "uploadNetwork": false}}})");
    REQUIRE(network.ok());
    CHECK(network->nx().remote_cache.upload_network == false);

    auto plain = load_with(dir, R"({"namedInputs": {}})");
    REQUIRE(plain.ok());
    CHECK(plain->nx().remote_cache.url.empty());
    CHECK_FALSE(plain->nx().remote_cache.read_only.has_value());
}

TEST_CASE("nx.json qk.remoteCache: a token or signing key in the file is refused, naming the variable",
          "[workspace]")
{
    CHECK(load_error("{\"qk\": {\"remoteCache\": {\"url\": \"http://h\",\n  \"token\": \"s3cret\"}}}") ==
          "nx.json:2:12: qk.remoteCache.token does not belong in a file that is committed; remove it and set "
          "QK_REMOTE_CACHE_TOKEN in the CI's secrets");
    std::string key = load_error(R"({"qk": {"remoteCache": {"signatureKey": "k"}}})");
    CHECK(key.find("qk.remoteCache.signatureKey does not belong") != std::string::npos);
    CHECK(key.find("QK_REMOTE_CACHE_SIGNATURE_KEY") != std::string::npos);
    CHECK(key.find("\"k\"") == std::string::npos);  // the secret is never repeated
}

TEST_CASE("nx.json qk.remoteCache: a wrong value or an unknown key names where and what it takes", "[workspace]")
{
    // The protocol's name is src/remote's to check (test_remote_policy.cpp): here, only that it is a string.
    CHECK(load_error(R"({"qk": {"remoteCache": {"protocol": 3}}})").find("qk.remoteCache.protocol must be") !=
          std::string::npos);
    CHECK(load_error(R"({"qk": {"remoteCache": {"upload": "all"}}})").find("qk.remoteCache.upload must be") !=
          std::string::npos);
    CHECK(load_error(R"({"qk": {"remoteCache": {"trust": true}}})").find("qk.remoteCache.trust must be") !=
          std::string::npos);
    CHECK(load_error(R"({"qk": {"remoteCache": {"readOnly": "yes"}}})") ==
          "nx.json:1:37: qk.remoteCache.readOnly must be true or false, found the string \"yes\"");
    CHECK(load_error(R"({"qk": {"remoteCache": {"url": ""}}})").find("qk.remoteCache.url must be a non-empty") !=
          std::string::npos);
    CHECK(load_error(R"({"qk": {"remoteCache": {"adress": "x"}}})") ==
          "nx.json:1:35: qk.remoteCache has no setting \"adress\"; it takes url, protocol, team, readOnly, upload, "
          "uploadNetwork and trust");
    CHECK(load_error(R"({"qk": {"remoteCache": {"uploadNetwork": "no"}}})") ==
          "nx.json:1:42: qk.remoteCache.uploadNetwork must be true or false (false keeps the results of tasks that "
          "declare their network, \"qk:sandbox\": {\"network\": true or a list}, from the remote cache), found the "
          "string \"no\"");
    CHECK(load_error(R"({"qk": []})").find("nx.json:1:8: qk must be an object") != std::string::npos);
    CHECK(load_error(R"({"qk": {"remoteCache": "http://h"}})").find("qk.remoteCache must be an object") !=
          std::string::npos);
}

TEST_CASE("nx.json qk.inputsNeverReadAfterRuns: read, 5 when absent, a whole number of 1 or more", "[workspace]")
{
    qk::test::TempDir dir;
    auto ws = load_with(dir, R"({"qk": {"inputsNeverReadAfterRuns": 12}})");
    REQUIRE(ws.ok());
    CHECK(ws->nx().inputs_never_read_after_runs == 12);
    qk::test::TempDir plain;
    auto none = load_with(plain, R"({})");
    REQUIRE(none.ok());
    CHECK(none->nx().inputs_never_read_after_runs == 5);
    for (const char* bad : {"0", "-3", "2.5", "\"4\"", "true", "1e9"})
        CHECK_THAT(load_error(std::string(R"({"qk": {"inputsNeverReadAfterRuns": )") + bad + "}}"),
                   Catch::Contains("nx.json:1:") && Catch::Contains("qk.inputsNeverReadAfterRuns") &&
                       Catch::Contains("a whole number of runs, 1 or more"));
    CHECK_THAT(load_error(R"({"qk": {"remoteCahce": {}}})"),
               Catch::Contains("qk has no setting \"remoteCahce\"") && Catch::Contains("remoteCache"));
}
