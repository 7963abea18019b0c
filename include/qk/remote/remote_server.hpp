// RemoteServer: the server a run shares results through, merged from its two sources and checked in one
// place: the environment's QK_REMOTE_CACHE_* (util's RemoteCacheSettings, as set) win field by field over
// nx.json's qk.remoteCache (FileServer). The protocols are named here and nowhere else; a new one is an
// enumerator, its name in kProtocols and its client in make_remote_cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "qk/util/result.hpp"
#include "qk/util/settings.hpp"

namespace qk::remote {

enum class Protocol : std::uint8_t { turbo, bazel };

// The protocol `name` spells ("turbo", "bazel"), or nullopt; and the name of `p`.
std::optional<Protocol> protocol_named(std::string_view name);
std::string_view protocol_name(Protocol p);

// A server to talk to, every field checked. `url` empty: no remote cache.
struct RemoteServer {
    std::string url;  // http:// or https://, without a trailing '/'
    Protocol protocol = Protocol::turbo;
    std::string token;          // a secret, never printed nor put in a message
    std::string team;           // turbo: team_... is a teamId, else a slug
    std::string signature_key;  // turbo only: a secret as the token
    unsigned connect_timeout_s = 10;
    unsigned stall_timeout_s = 30;
};

// nx.json's qk.remoteCache as written (empty: unset), with where its url and protocol were
// ("nx.json:3:12") for messages. A token or a signing key never comes from a file.
struct FileServer {
    std::string url;
    std::string url_at;
    std::string protocol;
    std::string protocol_at;
    std::string team;
};

// The environment's fields over the file's, then the checks, the same whichever source gave a value:
// the URL's shape, the protocol's name, and a signature key only with a protocol that signs. An Error
// names the variable or the file's position, never a secret nor a URL's credentials.
Result<RemoteServer> merge_server(const RemoteCacheSettings& env, const FileServer& file = {});

}  // namespace qk::remote
