// QK_REMOTE_CACHE_*: read once by Settings::read, a bad timeout an Error naming the variable and what it
// takes. The protocol's name and the URL are checked by remote::merge_server (test_remote_server.cpp).
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "qk/util/settings.hpp"
#include "settings_support.hpp"

using namespace qk;

namespace {

Result<Settings> read(std::map<std::string, std::string> vars)
{
    return test::settings_from(std::move(vars));
}

std::string error_of(std::map<std::string, std::string> vars)
{
    auto r = read(std::move(vars));
    REQUIRE_FALSE(r);
    return r.error().message;
}

}  // namespace

TEST_CASE("the remote cache's settings: defaults and each variable", "[util][settings]")
{
    auto none = read({});
    REQUIRE(none);
    CHECK(none->remote_cache.url.empty());
    CHECK(none->remote_cache.protocol.empty());  // nx.json's, else turbo
    CHECK(none->remote_cache.connect_timeout_s == 10);
    CHECK(none->remote_cache.stall_timeout_s == 30);

    auto all = read({{"QK_REMOTE_CACHE_URL", "https://cache.example.com/base//"},
                     {"QK_REMOTE_CACHE_PROTOCOL", "bazel"},
                     {"QK_REMOTE_CACHE_TOKEN", "tok"},
                     {"QK_REMOTE_CACHE_TEAM", "team_x"},
                     {"QK_REMOTE_CACHE_CONNECT_TIMEOUT", "3"},
                     {"QK_REMOTE_CACHE_STALL_TIMEOUT", "3600"}});
    REQUIRE(all);
    const auto& r = all->remote_cache;
    CHECK(r.url == "https://cache.example.com/base//");  // as set: merge_server checks and trims it
    CHECK(r.protocol == "bazel");
    CHECK((r.token == "tok" && r.team == "team_x" && r.signature_key.empty()));
    CHECK((r.connect_timeout_s == 3 && r.stall_timeout_s == 3600));

    auto turbo = read({{"QK_REMOTE_CACHE_URL", "http://127.0.0.1:3000"},
                       {"QK_REMOTE_CACHE_PROTOCOL", "turbo"},
                       {"QK_REMOTE_CACHE_SIGNATURE_KEY", "k"}});
    REQUIRE(turbo);
    CHECK(turbo->remote_cache.signature_key == "k");
}

TEST_CASE("the remote cache's bad timeouts name the variable", "[util][settings]")
{
    for (const char* bad : {"0", "abc", "-1", "3601", "5s", " 5"})
        CHECK_THAT(error_of({{"QK_REMOTE_CACHE_STALL_TIMEOUT", bad}}),
                   Catch::Contains("QK_REMOTE_CACHE_STALL_TIMEOUT='") && Catch::Contains("1 to 3600"));
    CHECK_THAT(error_of({{"QK_REMOTE_CACHE_CONNECT_TIMEOUT", "0"}}), Catch::Contains("QK_REMOTE_CACHE_CONNECT_TIMEOUT"));
}

TEST_CASE("url_without_credentials drops the user and password, and only them", "[util][settings]")
{
    CHECK(url_without_credentials("http://u:p@h:1/x") == "http://h:1/x");
    CHECK(url_without_credentials("https://u@h") == "https://h");
    CHECK(url_without_credentials("http://h/a@b") == "http://h/a@b");
    CHECK(url_without_credentials("http://h") == "http://h");
    CHECK(url_without_credentials("no scheme@x") == "no scheme@x");
}
