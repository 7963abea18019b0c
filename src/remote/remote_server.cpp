// merge_server (qk/remote/remote_server.hpp): where the protocols are named, and where a server's settings
// from the environment and from nx.json meet and are checked once.
#include "qk/remote/remote_server.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace qk::remote {

namespace {

constexpr std::array<std::pair<std::string_view, Protocol>, 2> kProtocols{{
    {"turbo", Protocol::turbo},
    {"bazel", Protocol::bazel},
}};

// Where a value came from, for its message: the variable, or the file's position and field.
struct Origin {
    bool from_env;
    std::string_view at;  // the file's "nx.json:3:12" when !from_env
};

Result<Protocol> protocol_of(const std::string& name, Origin origin)
{
    if (auto p = protocol_named(name))
        return *p;
    if (origin.from_env)
        return error(fmt::format("QK_REMOTE_CACHE_PROTOCOL='{}' must be turbo (Turborepo's remote cache API, "
                                 "the default) or bazel (Bazel's HTTP cache: nginx, bazel-remote, BuildBuddy)",
                                 name));
    return error(fmt::format("{}: qk.remoteCache.protocol must be \"turbo\" (Turborepo's API) or \"bazel\" (Bazel's "
                             "HTTP cache), found the string \"{}\"",
                             origin.at, name));
}

// `url` without its trailing '/', if it is a server's http(s) address with a host and no query.
Result<std::string> url_of(const std::string& url, Origin origin)
{
    std::string_view u(url);
    const auto scheme_end = u.find("://");
    const std::string_view scheme = u.substr(0, scheme_end);
    if (scheme_end == std::string_view::npos || (scheme != "http" && scheme != "https") ||
        u.size() == scheme_end + 3 || u[scheme_end + 3] == '/' ||
        u.find_first_of(" \t\r\n?#") != std::string_view::npos) {
        const std::string what = origin.from_env ? fmt::format("QK_REMOTE_CACHE_URL='{}'", url_without_credentials(url))
                                                 : fmt::format("{}: qk.remoteCache.url '{}'", origin.at,
                                                               url_without_credentials(url));
        return error(fmt::format("{} must be the server's http:// or https:// address, such as "
                                 "https://cache.example.com or http://127.0.0.1:3000/prefix (no query)",
                                 what));
    }
    while (u.size() > scheme_end + 3 && u.back() == '/')
        u.remove_suffix(1);
    return std::string(u);
}

}  // namespace

std::optional<Protocol> protocol_named(std::string_view name)
{
    for (const auto& [n, p] : kProtocols)
        if (n == name)
            return p;
    return std::nullopt;
}

std::string_view protocol_name(Protocol p)
{
    for (const auto& [n, q] : kProtocols)
        if (q == p)
            return n;
    return "?";
}

Result<RemoteServer> merge_server(const RemoteCacheSettings& env, const FileServer& file)
{
    RemoteServer s;
    s.token = env.token;
    s.team = env.team.empty() ? file.team : env.team;
    s.signature_key = env.signature_key;
    s.connect_timeout_s = env.connect_timeout_s;
    s.stall_timeout_s = env.stall_timeout_s;
    const bool protocol_from_env = !env.protocol.empty();
    const std::string& protocol = protocol_from_env ? env.protocol : file.protocol;
    if (!protocol.empty()) {
        QK_TRY(p, protocol_of(protocol, {protocol_from_env, file.protocol_at}));
        s.protocol = *p;
    }
    if (s.protocol == Protocol::bazel && !s.signature_key.empty())
        return error(fmt::format("QK_REMOTE_CACHE_SIGNATURE_KEY is set, but {} is bazel, which checks entries by "
                                 "their SHA-256 and signs nothing: unset it, or use the turbo protocol",
                                 protocol_from_env ? "QK_REMOTE_CACHE_PROTOCOL" : "nx.json's qk.remoteCache.protocol"));
    const bool url_from_env = !env.url.empty();
    const std::string& url = url_from_env ? env.url : file.url;
    if (!url.empty()) {
        QK_TRY(u, url_of(url, {url_from_env, file.url_at}));
        s.url = std::move(*u);
    }
    return s;
}

}  // namespace qk::remote
