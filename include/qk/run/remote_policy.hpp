// RemotePolicy: what a run does with the remote cache (read, write, which results it shares and trusts),
// from nx.json's qk.remoteCache, the environment's QK_REMOTE_CACHE_* and --remote-cache.
#pragma once

#include <string>

#include "qk/remote/remote_server.hpp"
#include "qk/util/result.hpp"
#include "qk/util/settings.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::run {

// What a run does with the remote cache: nx.json's qk.remoteCache under the environment's
// QK_REMOTE_CACHE_* and --remote-cache.
struct RemotePolicy {
    remote::RemoteServer server;  // server.url empty: no remote cache
    bool read = false;           // a local miss asks the server
    bool write = false;          // a stored result is uploaded
    bool upload_any = false;     // upload: any (else only verified results: audit::verified)
    bool trust_any = true;       // trust: any (else restore only entries whose record is verified)
    // uploadNetwork: false keeps the results of tasks that declare their network (true or a list) local:
    // what they fetched is in no key, so another machine restoring one gets what this one fetched.
    bool upload_network = true;
};

// `flag` is --remote-cache: "read", "readwrite", "off" or "" (readwrite, or read when nx.json says readOnly).
// An Error when the flag asks for a server that nothing names, or as remote::merge_server says.
Result<RemotePolicy> remote_policy(const workspace::RemoteCacheConfig& nx, const RemoteCacheSettings& env,
                                   const std::string& flag);

}  // namespace qk::run
