// remote_policy (qk/run/remote_policy.hpp): the environment wins over nx.json field by field, the flag over both.
#include "qk/run/remote_policy.hpp"

#include <fmt/format.h>

namespace qk::run {

Result<RemotePolicy> remote_policy(const workspace::RemoteCacheConfig& nx, const RemoteCacheSettings& env,
                                   const std::string& flag)
{
    RemotePolicy p;
    p.server = env;
    if (p.server.url.empty())
        p.server.url = nx.url;
    if (!p.server.protocol) {
        if (nx.protocol == "bazel")
            p.server.protocol = RemoteCacheProtocol::bazel;
        else if (nx.protocol == "turbo")
            p.server.protocol = RemoteCacheProtocol::turbo;
    }
    if (p.server.team.empty())
        p.server.team = nx.team;
    if (p.server.protocol == RemoteCacheProtocol::bazel && !p.server.signature_key.empty())
        return error("QK_REMOTE_CACHE_SIGNATURE_KEY is set, but nx.json's qk.remoteCache.protocol is bazel, which "
                     "checks entries by their SHA-256 and signs nothing: unset it, or use the turbo protocol");
    p.upload_any = nx.upload == "any";
    p.trust_any = nx.trust != "verified";
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
