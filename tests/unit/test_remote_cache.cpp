// The remote cache's pieces that need no server: digests and signatures against independent values,
// bazel's pointer, keys, sources, status mapping, and a transfer to a port nothing listens on.
// tests/e2e/test_remote_cache.py drives the client against real servers.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "qk/remote/remote_cache.hpp"
#include "remote/bazel_cache.hpp"
#include "remote/digest.hpp"
#include "remote/http_transfer.hpp"
#include "remote/turbo_cache.hpp"
#include "qk/util/unique_fd.hpp"
#include "test_support.hpp"

using namespace qk;
using namespace qk::remote;

TEST_CASE("HMAC-SHA256 and SHA-256 give the published values", "[remote]")
{
    // RFC 4231, test case 2.
    HmacSha256 mac("Jefe");
    mac.update("what do ya ");
    mac.update("want for nothing?");
    CHECK(hex(mac.finish()) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("turbo's tag is base64(HMAC-SHA256(key, hash + team + body))", "[remote]")
{
    // One of turbo's own test cases (signature_authentication.rs), the tag computed by Python's hmac.
    const std::string body{5, 72, static_cast<char>(219), 39, static_cast<char>(156)};
    CHECK(TurboCache::tag("x3vq8mFz0J", "d5b7e4688f", "tH7sL1Rn9K", body) ==
          "ki5kbVnrrPqbWiWxMWbW3OE6Q6SXmbqEpfGvEFQWbZw=");
}

TEST_CASE("tags compare padded or not, and differ by one character", "[remote]")
{
    const std::string tag = "ki5kbVnrrPqbWiWxMWbW3OE6Q6SXmbqEpfGvEFQWbZw=";
    CHECK(same_base64_digest(tag, tag));
    CHECK(same_base64_digest(tag, "ki5kbVnrrPqbWiWxMWbW3OE6Q6SXmbqEpfGvEFQWbZw"));
    CHECK_FALSE(same_base64_digest(tag, "ki5kbVnrrPqbWiWxMWbW3OE6Q6SXmbqEpfGvEFQWbZx="));
    CHECK_FALSE(same_base64_digest(tag, ""));
    CHECK_FALSE(same_base64_digest(tag, tag + "AA"));
}

TEST_CASE("bazel's pointer: written, read back, and anything else refused", "[remote]")
{
    const CasPointer p{sha256_hex("x"), 12345};
    CHECK(format_pointer(p) == "qk-entry-v1 " + p.sha256 + " 12345\n");
    auto back = parse_pointer(format_pointer(p));
    REQUIRE(back);
    CHECK((back->sha256 == p.sha256 && back->size == 12345));
    const std::string h = p.sha256;
    const std::vector<std::string> bad_pointers{"", "qk-entry-v1 " + h + " 1", "qk-entry-v2 " + h + " 1\n", "qk-entry-v1 " + h + "\n",
                                  "qk-entry-v1 " + h + "  1\n", "qk-entry-v1 " + h + " -1\n", "qk-entry-v1 " + h + " 1x\n",
                                  "qk-entry-v1 " + h + " 99999999999999999999999\n", "qk-entry-v1 " + h.substr(1) + " 1\n",
                                  "qk-entry-v1 " + std::string(64, 'A') + " 1\n"};
    for (const auto& bad : bad_pointers)
        CHECK_FALSE(parse_pointer(bad));
    // The action cache's address hides the key behind a prefix of qk's own.
    CHECK(ac_path("ab") == "/ac/6bec7e0ad5ce33dbbec1e926a5c0778dfd178179a0f668363d3c9f875bd1d55a");
}

TEST_CASE("keys are lower-case hex, 1 to 128 digits", "[remote]")
{
    CHECK(valid_key("0123456789abcdef"));
    CHECK(valid_key(std::string(128, 'f')));
    for (const std::string& bad :
         std::vector<std::string>{"", "ABCDEF", "ab/cd", "../x", "ab cd", "ab?x", std::string(129, 'a')})
        CHECK_FALSE(valid_key(bad));
    auto e = check_key("../x", "turbo http://h");
    REQUIRE_FALSE(e);
    CHECK_THAT(e.error().message, Catch::Contains("not a cache key"));
}

TEST_CASE("a file source is read twice from any offset; one that ends early is an error", "[remote]")
{
    qk::test::TempDir t("qk-remote-source");
    std::string bytes;
    for (int i = 0; i < 200000; ++i)
        bytes += static_cast<char>('a' + i % 26);
    t.write("entry", bytes);
    const auto path = t.path / "entry";
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    REQUIRE(fd.valid());
    const Source s = file_source(fd.get(), bytes.size());
    for (int pass = 0; pass < 2; ++pass) {
        std::string got;
        REQUIRE(read_source(s, [&got](std::string_view c) { got.append(c); }));
        CHECK(got == bytes);
    }
    const Source longer = file_source(fd.get(), bytes.size() + 10);
    auto r = read_source(longer, [](std::string_view) {});
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("ended after 200000 of its 200010 bytes"));
}

TEST_CASE("statuses map to the kinds a caller branches on", "[remote]")
{
    CHECK(status_error(401, "GET u").kind == ErrorKind::remote_forbidden);
    CHECK(status_error(403, "PUT u").kind == ErrorKind::remote_forbidden);
    CHECK(status_error(500, "GET u").kind == ErrorKind::remote_server);
    CHECK(status_error(503, "GET u").kind == ErrorKind::remote_server);
    CHECK(status_error(412, "PUT u").kind == ErrorKind::remote_protocol);
    CHECK(status_error(302, "GET u").kind == ErrorKind::remote_protocol);
    CHECK_THAT(status_error(403, "PUT http://h/x").message, Catch::StartsWith("PUT http://h/x: 403"));
}

TEST_CASE("a server that is not there is unreachable, named without the URL's credentials", "[remote]")
{
    // A port just bound and closed: nothing listens there.
    int port = 0;
    {
        const UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        REQUIRE(::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        REQUIRE(::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
        port = ntohs(a.sin_port);
    }
    for (const auto protocol : {qk::remote::Protocol::turbo, qk::remote::Protocol::bazel}) {
        qk::remote::RemoteServer settings;
        settings.url = "http://user:s3cret@127.0.0.1:" + std::to_string(port) + "/prefix";
        settings.protocol = protocol;
        settings.token = "tok-secret";
        auto cache = make_remote_cache(settings);
        REQUIRE(cache);
        CHECK_THAT((*cache)->describe(), Catch::EndsWith(" http://127.0.0.1:" + std::to_string(port) + "/prefix"));
        auto got = (*cache)->get("abcd", [](std::string_view) { return Status(); });
        REQUIRE_FALSE(got);
        CHECK(got.error().kind == ErrorKind::remote_unreachable);
        CHECK_THAT(got.error().message, !Catch::Contains("s3cret") && !Catch::Contains("tok-secret"));
        auto bad_key = (*cache)->exists("ABCD");
        REQUIRE_FALSE(bad_key);
        CHECK(bad_key.error().kind == ErrorKind::other);
    }
}
