// merge_server: the environment's QK_REMOTE_CACHE_* over nx.json's qk.remoteCache, field by field, and
// the checks applied the same to a value from either source, each bad value an Error naming the variable
// or the file's position, never quoting a secret.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "qk/remote/remote_server.hpp"
#include "settings_support.hpp"

using namespace qk;
using namespace qk::remote;

namespace {

Result<RemoteServer> from_env(std::map<std::string, std::string> vars, const FileServer& file = {})
{
    auto settings = test::settings_from(std::move(vars));
    REQUIRE(settings);
    return merge_server(settings->remote_cache, file);
}

std::string error_of(std::map<std::string, std::string> vars, const FileServer& file = {})
{
    auto r = from_env(std::move(vars), file);
    REQUIRE_FALSE(r);
    return r.error().message;
}

FileServer file_with(std::string url, std::string protocol = {})
{
    return {std::move(url), "nx.json:3:12", std::move(protocol), "nx.json:4:17", {}};
}

}  // namespace

TEST_CASE("merge_server: each protocol by its name, turbo when none is named", "[remote][settings]")
{
    CHECK(protocol_named("turbo") == Protocol::turbo);
    CHECK(protocol_named("bazel") == Protocol::bazel);
    CHECK_FALSE(protocol_named("s3"));
    for (Protocol p : {Protocol::turbo, Protocol::bazel})
        CHECK(protocol_named(protocol_name(p)) == p);

    auto none = from_env({});
    REQUIRE(none);
    CHECK(none->url.empty());
    CHECK(none->protocol == Protocol::turbo);

    auto all = from_env({{"QK_REMOTE_CACHE_URL", "https://cache.example.com/base//"},
                         {"QK_REMOTE_CACHE_PROTOCOL", "bazel"},
                         {"QK_REMOTE_CACHE_TOKEN", "tok"},
                         {"QK_REMOTE_CACHE_TEAM", "team_x"},
                         {"QK_REMOTE_CACHE_STALL_TIMEOUT", "3600"}});
    REQUIRE(all);
    CHECK(all->url == "https://cache.example.com/base");
    CHECK(all->protocol == Protocol::bazel);
    CHECK((all->token == "tok" && all->team == "team_x" && all->signature_key.empty()));
    CHECK(all->stall_timeout_s == 3600);

    auto turbo = from_env({{"QK_REMOTE_CACHE_URL", "http://127.0.0.1:3000"},
                           {"QK_REMOTE_CACHE_PROTOCOL", "turbo"},
                           {"QK_REMOTE_CACHE_SIGNATURE_KEY", "k"}});
    REQUIRE(turbo);
    CHECK(turbo->signature_key == "k");
}

TEST_CASE("merge_server: bad values from the environment name the variable, hiding secrets", "[remote][settings]")
{
    CHECK_THAT(error_of({{"QK_REMOTE_CACHE_PROTOCOL", "s3"}}),
               Catch::StartsWith("QK_REMOTE_CACHE_PROTOCOL='s3' must be turbo") && Catch::Contains("bazel"));
    for (const char* bad : {"ftp://host", "cache.example.com", "http://", "http:///path", "http://h/x?y=1", "http://h x"})
        CHECK_THAT(error_of({{"QK_REMOTE_CACHE_URL", bad}}), Catch::Contains("QK_REMOTE_CACHE_URL="));
    const std::string m = error_of({{"QK_REMOTE_CACHE_URL", "ftp://user:hunter2@host/x"}, {"QK_REMOTE_CACHE_TOKEN", "tk"}});
    CHECK_THAT(m, Catch::Contains("ftp://host/x") && !Catch::Contains("hunter2"));
    CHECK_THAT(error_of({{"QK_REMOTE_CACHE_PROTOCOL", "bazel"}, {"QK_REMOTE_CACHE_SIGNATURE_KEY", "secret-k"}}),
               Catch::Contains("QK_REMOTE_CACHE_SIGNATURE_KEY") && !Catch::Contains("secret-k"));
}

TEST_CASE("merge_server: a value from nx.json is checked as one from the environment, named by its position",
          "[remote][settings]")
{
    // The URL: the same shape, trimmed the same.
    auto ok = from_env({}, file_with("http://127.0.0.1:3000/prefix/"));
    REQUIRE(ok);
    CHECK(ok->url == "http://127.0.0.1:3000/prefix");
    for (const char* bad : {"ftp://host", "cache.example.com", "http://h/x?y=1"})
        CHECK_THAT(error_of({}, file_with(bad)),
                   Catch::StartsWith("nx.json:3:12: qk.remoteCache.url '") && Catch::Contains("http:// or https://"));
    CHECK_THAT(error_of({}, file_with("ftp://user:hunter2@host/x")), !Catch::Contains("hunter2"));
    // The protocol: the same names.
    CHECK(error_of({}, file_with("http://h", "s3")) ==
          "nx.json:4:17: qk.remoteCache.protocol must be \"turbo\" (Turborepo's API) or \"bazel\" (Bazel's HTTP "
          "cache), found the string \"s3\"");
    // "bazel with a signature key", once, whichever source named bazel.
    CHECK_THAT(error_of({{"QK_REMOTE_CACHE_SIGNATURE_KEY", "secret-k"}}, file_with("http://h", "bazel")),
               Catch::Contains("QK_REMOTE_CACHE_SIGNATURE_KEY") && Catch::Contains("nx.json's qk.remoteCache.protocol") &&
                   !Catch::Contains("secret-k"));
    // The environment wins field by field: its URL and protocol are the ones checked.
    auto env_wins = from_env({{"QK_REMOTE_CACHE_URL", "http://from-env"}, {"QK_REMOTE_CACHE_PROTOCOL", "turbo"}},
                             file_with("ftp://not-checked", "s3"));
    REQUIRE(env_wins);
    CHECK(env_wins->url == "http://from-env");
    CHECK(env_wins->protocol == Protocol::turbo);
}
