// What a task reached on the network, judged by its declared network: the connections a recording shows,
// listed as network (allowed, which is everything when the target declares nothing), loopbackNetwork
// (the machine's own: never judged) or undeclaredNetwork (outside a declared false or list: going beyond),
// each as "host:port". rules::network_allows is the one answer; this only sorts what it says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "qk/audit/findings.hpp"
#include "qk/record/network_use.hpp"
#include "qk/workspace/network.hpp"

namespace qk::audit {

// Each endpoint of `used` into one of the three lists of `out` and its connections. A connection is
// allowed when the declaration allows the name it looked up or the address it connected to.
void classify_network(const record::NetworkUse& used, const workspace::NetworkDeclaration& declared,
                      TaskFindings& out);

// Under enforce, what a declared false or list held from the task by its network namespace, beside what
// the proxy refused: every endpoint off the machine (it had no route), and a connection to its own
// loopback that failed, as refusedNetwork entries. The task may have gone on another way than it would
// without the sandbox, so its result is withheld as for any refusal. An open network adds nothing.
void refused_network_attempts(const record::NetworkUse& used, const workspace::NetworkDeclaration& declared,
                              TaskFindings& out);

// "host:port" as the lists hold it: "registry.npmjs.org:443", "10.0.0.1:53", "[2001:db8::1]:443".
std::string network_entry(std::string_view host, std::uint16_t port);

// An entry read back: its host (no brackets) and port; nullopt when it is no "host:port".
struct NetworkEntry {
    std::string host;
    std::uint16_t port = 0;
};
std::optional<NetworkEntry> parse_network_entry(std::string_view entry);

// Whether `declared` allows the entry `entry` of `found`: its host, or an address one of its connections
// reached it at (a report's connections; a pattern may name either). An entry that is no "host:port" is
// asked by its whole text, on any port.
bool network_entry_allowed(const workspace::NetworkDeclaration& declared, const TaskFindings& found,
                           const std::string& entry);

}  // namespace qk::audit
