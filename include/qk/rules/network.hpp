// May this task reach this host on this port? The one answer for the network, asked by the audit of each
// connection and lookup a recording shows and by enforce's filtering proxy of each request, from what the
// target declares (qk/workspace/network.hpp).
#pragma once

#include <cstdint>
#include <string_view>

#include "qk/workspace/network.hpp"

namespace qk::rules {

// Whether `decl` allows `host` (a name as looked up or asked of a proxy, or an address as connected to:
// "10.0.0.1", "::1", "[::1]") on `port`; port 0 asks for the name whatever the port, as a DNS lookup does.
// Undeclared and true allow everything, false nothing, a list what one of its patterns matches: the same
// name or address (case and a trailing dot aside), "*.example.com" any name under example.com, and a
// pattern's port only that port. An IPv4 address written as IPv6 ("::ffff:10.0.0.1") is the IPv4 one.
bool network_allows(const workspace::NetworkDeclaration& decl, std::string_view host, std::uint16_t port);

// Whether `address` is the machine's own: 127.0.0.0/8, ::1 (and ::ffff:127.x.y.z), or "localhost". The
// audit lists loopback apart and does not judge it: under enforce a task that declares false or a list
// keeps a loopback of its own, where it may reach the servers it starts.
bool is_loopback(std::string_view address);

}  // namespace qk::rules
