// check_remote (qk/remote/remote_check.hpp): each fault a run would meet, met first by a HEAD, a PUT and a
// GET of a probe entry, and named with its remedy rather than the status it came as.
#include "qk/remote/remote_check.hpp"

#include <fmt/format.h>

#include "qk/remote/remote_cache.hpp"

namespace qk::remote {

namespace {

constexpr std::string_view kProbeBody = "qk doctor's probe entry: safe to delete\n";

const char* const kUrlFix = "set QK_REMOTE_CACHE_URL (or nx.json's qk.remoteCache.url) to the server's address, "
                            "http(s)://host[:port][/path]";

RemoteCheck failed(const char* name, const Error& e, std::string fix)
{
    return {name, false, true, e.message, std::move(fix)};
}

// A failed HEAD, said by the step it stops: the connection, the token, or the protocol.
RemoteCheck head_failure(const Error& e, const RemoteServer& settings)
{
    switch (e.kind) {
    case ErrorKind::remote_unreachable:
        return failed("remote-reach", e,
                      "start the server, or correct the address: " + std::string(kUrlFix) +
                          "; a slow network may need QK_REMOTE_CACHE_CONNECT_TIMEOUT raised");
    case ErrorKind::remote_timeout:
        return failed("remote-reach", e,
                      "the server took the connection and did not answer: restart it or find what holds it "
                      "(stopped, overloaded, a proxy waiting on it)");
    case ErrorKind::remote_forbidden:
        return failed("remote-token", e,
                      settings.token.empty() ? "set QK_REMOTE_CACHE_TOKEN (turborepo-remote-cache: one of its "
                                               "TURBO_TOKEN list)"
                                             : "set QK_REMOTE_CACHE_TOKEN to a token the server accepts "
                                               "(turborepo-remote-cache: one of its TURBO_TOKEN list)");
    case ErrorKind::remote_server:
        return failed("remote-protocol", e, "the server failed: see its own log");
    default:
        return failed("remote-protocol", e,
                      "check that the protocol is the server's (QK_REMOTE_CACHE_PROTOCOL or nx.json's "
                      "qk.remoteCache.protocol: turbo or bazel) and that the URL is the cache's root (bazel on "
                      "nginx: with the location's path, http://host:8080/cache)");
    }
}

RemoteCheck write_failure(const Error& e)
{
    switch (e.kind) {
    case ErrorKind::remote_forbidden:
        return failed("remote-write", e,
                      "runs here will fetch and upload nothing: give them a token that may write "
                      "(turborepo-remote-cache: an instance without READ_ONLY=true), or set nx.json's "
                      "qk.remoteCache.readOnly to true where only reading is meant");
    case ErrorKind::remote_server:
        return failed("remote-write", e,
                      "see the server's error log (nginx with WebDAV: the worker's user must own the cache "
                      "directory: chown -R it)");
    default:
        return head_failure(e, {});
    }
}

}  // namespace

std::vector<RemoteCheck> check_remote(const RemoteServer& settings, bool write)
{
    std::vector<RemoteCheck> out;
    auto client = make_remote_cache(settings);
    if (!client) {
        out.push_back(failed("remote-reach", client.error(), kUrlFix));
        return out;
    }
    const RemoteCache& server = **client;
    const std::string key(kProbeKey);
    auto there = server.exists(key);
    if (!there) {
        if (there.error().kind != ErrorKind::remote_unreachable && there.error().kind != ErrorKind::remote_timeout)
            out.push_back({"remote-reach", true, true, server.describe() + " answers", {}});
        out.push_back(head_failure(there.error(), settings));
        return out;
    }
    out.push_back({"remote-reach", true, true, server.describe() + " answers", {}});
    out.push_back({"remote-token", true, true,
                   settings.token.empty() ? "no token set, and the server asks for none to read"
                                          : "the server accepts QK_REMOTE_CACHE_TOKEN to read",
                   {}});
    if (!write) {
        out.push_back({"remote-write", true, false,
                       "not tried: runs here only read (nx.json's qk.remoteCache.readOnly)", {}});
        out.push_back({"remote-protocol", true, true, "a HEAD of a probe entry answered as the protocol says", {}});
        return out;
    }
    const Source body{kProbeBody.size(), [](std::uint64_t offset, char* buf, std::size_t len) {
                          const std::size_t n = std::min<std::size_t>(len, kProbeBody.size() - offset);
                          kProbeBody.copy(buf, n, offset);
                          return Result<std::size_t>(n);
                      }};
    if (auto put = server.put(key, body); !put) {
        out.push_back(write_failure(put.error()));
        return out;
    }
    out.push_back({"remote-write", true, true, fmt::format("a probe entry was written (key {})", key), {}});
    std::string back;
    auto got = server.get(key, [&back](std::string_view chunk) -> Status {
        back.append(chunk);
        return {};
    });
    if (!got) {
        std::string fix = "the server does not give back what it was sent: see its log";
        if (got.error().kind == ErrorKind::remote_tampered && !settings.signature_key.empty())
            fix = "start turborepo-remote-cache with TURBO_REMOTE_CACHE_SIGNATURE_KEY set (any value: it then keeps "
                  "and serves each entry's tag), or unset QK_REMOTE_CACHE_SIGNATURE_KEY to share unsigned entries";
        out.push_back(failed("remote-protocol", got.error(), fix));
    } else if (*got == Lookup::miss || back != kProbeBody) {
        out.push_back({"remote-protocol", false, true,
                       *got == Lookup::miss ? "the probe entry written is not there when read back"
                                            : "the probe entry read back is not the one written",
                       "the server does not keep what it is sent: check its storage (its path, its free space)"});
    } else {
        out.push_back({"remote-protocol", true, true,
                       settings.protocol == Protocol::bazel
                           ? "the probe entry read back whole, its SHA-256 checked"
                       : settings.signature_key.empty() ? "the probe entry read back whole"
                                                        : "the probe entry read back whole, its signature checked",
                       {}});
    }
    return out;
}

}  // namespace qk::remote
