// What a target declares of the network: "qk:sandbox": { "network": false | true | ["host[:port]", ...] },
// on the target, in targetDefaults, or as the workspace's default in nx.json's "qk": { "sandbox":
// { "network": ... } }. Parsed and checked here, where the configuration is read; whether a host and port
// are allowed by it is rules::network_allows (qk/rules/network.hpp), the one answer the audit and
// enforce's proxy both ask.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::workspace {

// One entry of a network list: "registry.npmjs.org", "*.example.com:443", "127.0.0.1:8080", "[::1]".
struct HostPattern {
    std::string host;        // lower case, no trailing dot, no brackets; for a wildcard, the part after "*."
    bool subdomains = false; // "*.example.com": any name ending in ".example.com" (not example.com itself)
    std::uint16_t port = 0;  // 0: any port
    std::string text;        // as written, for messages and for `qk report fix`

    bool operator==(const HostPattern&) const = default;
};

struct NetworkDeclaration {
    enum class Mode : std::uint8_t {
        undeclared,  // nothing said: open, as the spec keeps everything outside the workspace
        any,         // true: open, and said so
        none,        // false: no network but the task's own loopback
        hosts,       // a list: only these hosts
    };
    Mode mode = Mode::undeclared;
    std::vector<HostPattern> hosts;  // for Mode::hosts, in the order written
    // Where it was said: "" when undeclared, else "target" (the target or its targetDefaults entry) or
    // "workspace" (nx.json's qk.sandbox.network).
    std::string source;

    // true and undeclared leave the network open.
    bool open() const { return mode == Mode::undeclared || mode == Mode::any; }
    bool operator==(const NetworkDeclaration&) const = default;
};

// "registry.npmjs.org", "*.example.com:443", "[::1]:8080". The error says what is wrong with it and what
// is taken ("a host name, not a URL", "a port from 1 to 65535"), without a position: the caller adds it.
Result<HostPattern> parse_host_pattern(std::string_view text);

}  // namespace qk::workspace
