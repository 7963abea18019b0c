#include "turbo_cache.hpp"

#include <utility>

#include <fmt/format.h>

#include "digest.hpp"

namespace qk::remote {

namespace {

// A query value: what is not unreserved (RFC 3986) is percent-encoded.
std::string query_escaped(std::string_view v)
{
    std::string out;
    for (const char ch : v) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~')
            out += ch;
        else
            out += fmt::format("%{:02X}", c);
    }
    return out;
}

// Turbo's signer: the HMAC starts with the artifact's hash and the team, then takes the body
// (turborepo-cache's signature_authentication.rs; base64 with padding since turbo 2).
HmacSha256 signer(std::string_view signature_key, std::string_view key, std::string_view team)
{
    HmacSha256 mac(signature_key);
    mac.update(key);
    mac.update(team);
    return mac;
}

}  // namespace

TurboCache::TurboCache(HttpClient client, std::string team, std::string signature_key)
    : client_(std::move(client)), team_(std::move(team)), signature_key_(std::move(signature_key))
{
    // turbo's own rule: a team given as team_... is an id, anything else the team's slug.
    if (!team_.empty())
        team_query_ = fmt::format("?{}={}", team_.starts_with("team_") ? "teamId" : "slug", query_escaped(team_));
}

std::string TurboCache::path_of(std::string_view key) const
{
    return fmt::format("/v8/artifacts/{}{}", key, team_query_);
}

std::string TurboCache::describe() const { return "turbo " + client_.shown_url; }

Error TurboCache::status_error(long status, const std::string& what) const
{
    // turborepo-remote-cache answers a request without a token 400, Vercel 401 or 403: with none set, the
    // status says less than the cause.
    if (client_.bearer.empty() && (status == 400 || status == 401 || status == 403))
        return error(fmt::format("{}: no token: set QK_REMOTE_CACHE_TOKEN to a token the server accepts (it "
                                 "refuses requests without one: {})",
                                 what, status),
                     ErrorKind::remote_forbidden);
    return remote::status_error(status, what);
}

Result<Lookup> TurboCache::lookup(long status, const std::string& what) const
{
    if (status == 200 || status == 404)
        return lookup_of(status, what);
    return status_error(status, what);
}

std::string TurboCache::tag(std::string_view signature_key, std::string_view key, std::string_view team,
                            std::string_view body)
{
    HmacSha256 mac = signer(signature_key, key, team);
    mac.update(body);
    return base64(mac.finish());
}

Result<Lookup> TurboCache::exists(std::string_view key) const
{
    QK_TRY_STATUS(check_key(key, describe()));
    const HttpRequest request{Method::head, path_of(key), {}, nullptr, nullptr};
    QK_TRY(response, perform(client_, request));
    return lookup(response->status, remote::describe(client_, request));
}

Result<Lookup> TurboCache::get(std::string_view key, const Sink& sink) const
{
    QK_TRY_STATUS(check_key(key, describe()));
    const bool signed_entries = !signature_key_.empty();
    HmacSha256 mac = signer(signature_key_, key, team_);
    const Sink checked = [&](std::string_view chunk) {
        if (signed_entries)
            mac.update(chunk);
        return sink(chunk);
    };
    const HttpRequest request{Method::get, path_of(key), {}, nullptr, &checked};
    const std::string what = remote::describe(client_, request);
    QK_TRY(response, perform(client_, request));
    QK_TRY(found, lookup(response->status, what));
    if (*found == Lookup::miss)
        return Lookup::miss;
    if (signed_entries) {
        if (response->artifact_tag.empty())
            return error(fmt::format("{}: the artifact has no x-artifact-tag, and QK_REMOTE_CACHE_SIGNATURE_KEY asks "
                                     "for signed ones: refused",
                                     what),
                         ErrorKind::remote_tampered);
        if (!same_base64_digest(base64(mac.finish()), response->artifact_tag))
            return error(fmt::format("{}: the artifact's x-artifact-tag does not match its body under "
                                     "QK_REMOTE_CACHE_SIGNATURE_KEY (changed since it was stored, or signed with "
                                     "another key or team): refused",
                                     what),
                         ErrorKind::remote_tampered);
    }
    return Lookup::hit;
}

Status TurboCache::put(std::string_view key, const Source& source) const
{
    QK_TRY_STATUS(check_key(key, describe()));
    HttpRequest request{Method::put, path_of(key), {"Content-Type: application/octet-stream"}, &source, nullptr};
    if (!signature_key_.empty()) {
        // The tag goes in a header, before the body: a first pass over the source.
        HmacSha256 mac = signer(signature_key_, key, team_);
        QK_TRY_STATUS(read_source(source, [&mac](std::string_view chunk) { mac.update(chunk); }));
        request.headers.push_back("x-artifact-tag: " + base64(mac.finish()));
    }
    QK_TRY(response, perform(client_, request));
    if (response->status < 200 || response->status >= 300)
        return status_error(response->status, remote::describe(client_, request));
    return {};
}

}  // namespace qk::remote
