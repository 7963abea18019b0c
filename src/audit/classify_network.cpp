// classify_network and the "host:port" entries of the network kinds (qk/audit/network_findings.hpp).
#include <charconv>

#include <fmt/format.h>

#include "qk/audit/network_findings.hpp"
#include "qk/rules/network.hpp"

namespace qk::audit {

std::string network_entry(std::string_view host, std::uint16_t port)
{
    if (host.find(':') != std::string_view::npos)
        return fmt::format("[{}]:{}", host, port);
    return fmt::format("{}:{}", host, port);
}

std::optional<NetworkEntry> parse_network_entry(std::string_view entry)
{
    const std::size_t colon = entry.rfind(':');
    if (colon == std::string_view::npos || colon == 0)
        return std::nullopt;
    std::string_view host = entry.substr(0, colon);
    const std::string_view digits = entry.substr(colon + 1);
    unsigned port = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535)
        return std::nullopt;
    if (host.front() == '[') {
        if (host.size() < 3 || host.back() != ']')
            return std::nullopt;
        host = host.substr(1, host.size() - 2);
    } else if (host.find(':') != std::string_view::npos) {
        return std::nullopt;  // an IPv6 address is written in brackets, so that its port is told apart
    }
    return NetworkEntry{std::string(host), static_cast<std::uint16_t>(port)};
}

bool network_entry_allowed(const workspace::NetworkDeclaration& declared, const TaskFindings& found,
                           const std::string& entry)
{
    auto parsed = parse_network_entry(entry);
    if (!parsed)
        return rules::network_allows(declared, entry, 0);
    if (rules::network_allows(declared, parsed->host, parsed->port))
        return true;
    for (const TaskFindings::Connection& c : found.connections)
        if (c.reached == entry && rules::network_allows(declared, c.address, c.port))
            return true;
    return false;
}

void classify_network(const record::NetworkUse& used, const workspace::NetworkDeclaration& declared,
                      TaskFindings& out)
{
    for (const auto& [to, use] : used.endpoints()) {
        const std::string_view host = used.host_of(to.address);
        std::string entry = network_entry(host.empty() ? std::string_view(to.address) : host, to.port);
        // A name is asked as the proxy asks it; its address too, which a list may name instead.
        const bool allowed = rules::network_allows(declared, to.address, to.port) ||
                             (!host.empty() && rules::network_allows(declared, host, to.port));
        // Loopback by the address it reached: a name resolving to the machine's own is the machine's own.
        (rules::is_loopback(to.address) ? out.loopback_network
         : allowed                       ? out.network
                                         : out.undeclared_network)
            .push_back(entry);
        out.connections.push_back(
            {std::move(entry), to.address, to.port, to.datagram, std::string(host), use.count, use.reached});
    }
}

void refused_network_attempts(const record::NetworkUse& used, const workspace::NetworkDeclaration& declared,
                              TaskFindings& out)
{
    if (declared.open())
        return;  // no namespace of its own, no proxy: nothing of the network was held from it
    for (const auto& [to, use] : used.endpoints()) {
        // Its own loopback answers what it serves itself; a connection there that failed may have found the
        // machine's own service in a plain run (the namespace's loopback has none; under a list, Landlock
        // holds every port but the proxy's). A datagram's send succeeds whoever listens: it says nothing.
        if (rules::is_loopback(to.address) && (use.reached || to.datagram))
            continue;
        const std::string_view host = used.host_of(to.address);
        out.refused_network.push_back(network_entry(host.empty() ? std::string_view(to.address) : host, to.port));
    }
}

}  // namespace qk::audit
