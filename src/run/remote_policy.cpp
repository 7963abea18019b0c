// remote_policy (qk/run/remote_policy.hpp): the server as remote::merge_server merges it, the flag over both.
#include "qk/run/remote_policy.hpp"

#include <utility>

#include <fmt/format.h>

namespace qk::run {

Result<RemotePolicy> remote_policy(const workspace::RemoteCacheConfig& nx, const RemoteCacheSettings& env,
                                   const std::string& flag)
{
    RemotePolicy p;
    QK_TRY(server, remote::merge_server(env, {nx.url, nx.url_at, nx.protocol, nx.protocol_at, nx.team}));
    p.server = std::move(*server);
    p.upload_any = nx.upload == "any";
    p.trust_any = nx.trust != "verified";
    p.upload_network = nx.upload_network.value_or(true);
    if (flag == "off")
        return p;
    if (p.server.url.empty()) {
        if (!flag.empty())
            return error(fmt::format("--remote-cache={} names no server: set QK_REMOTE_CACHE_URL, or \"qk\": "
                                     "{{\"remoteCache\": {{\"url\": ...}}}} in nx.json",
                                     flag));
        return p;
    }
    p.read = true;
    p.write = flag == "readwrite" || (flag.empty() && !nx.read_only.value_or(false));
    return p;
}

}  // namespace qk::run
