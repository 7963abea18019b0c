// The turbo protocol: Turborepo's remote cache API, as Vercel and the turborepo-remote-cache server
// serve it. An entry is one artifact, /v8/artifacts/<key>?teamId=team_... (or ?slug=...), with a bearer
// token; with a signature key, each PUT carries x-artifact-tag = base64(HMAC-SHA256(key, hash + team +
// body)) as turbo computes it, and a GET is a hit only with a tag that matches.
#pragma once

#include <string>
#include <string_view>

#include "http_transfer.hpp"
#include "qk/remote/remote_cache.hpp"

namespace qk::remote {

class TurboCache final : public RemoteCache {
public:
    TurboCache(HttpClient client, std::string team, std::string signature_key);

    Result<Lookup> exists(std::string_view key) const override;
    Result<Lookup> get(std::string_view key, const Sink& sink) const override;
    Status put(std::string_view key, const Source& source) const override;
    std::string describe() const override;

    // The tag turbo would send for `body` under `key` (exposed for the tests).
    static std::string tag(std::string_view signature_key, std::string_view key, std::string_view team,
                           std::string_view body);

private:
    std::string path_of(std::string_view key) const;
    // The Error for an answer that is not the request's (remote::status_error, saying "no token" where it is).
    Error status_error(long status, const std::string& what) const;
    // 200 hit, 404 miss, else status_error.
    Result<Lookup> lookup(long status, const std::string& what) const;

    HttpClient client_;
    std::string team_;
    std::string team_query_;  // "?teamId=team_x", "?slug=x" or empty
    std::string signature_key_;
};

}  // namespace qk::remote
