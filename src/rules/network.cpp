// rules::network_allows: a host and port against a target's network declaration.
#include "qk/rules/network.hpp"

#include <algorithm>
#include <string>

namespace qk::rules {
namespace {

// As parse_host_pattern spells a pattern's host: lower case, no brackets, no trailing dot, an IPv4
// address mapped into IPv6 as the IPv4 one.
std::string normalised(std::string_view host)
{
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (host.ends_with('.'))
        host.remove_suffix(1);
    std::string s(host);
    std::transform(s.begin(), s.end(), s.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    constexpr std::string_view kMapped = "::ffff:";
    if (s.starts_with(kMapped) && s.find('.') != std::string::npos)
        s.erase(0, kMapped.size());
    return s;
}

bool matches(const workspace::HostPattern& p, std::string_view host, std::uint16_t port)
{
    if (p.port != 0 && port != 0 && p.port != port)
        return false;
    if (!p.subdomains)
        return host == p.host;
    return host.size() > p.host.size() + 1 && host.ends_with(p.host) && host[host.size() - p.host.size() - 1] == '.';
}

}  // namespace

bool network_allows(const workspace::NetworkDeclaration& decl, std::string_view host, std::uint16_t port)
{
    using Mode = workspace::NetworkDeclaration::Mode;
    switch (decl.mode) {
    case Mode::undeclared:
    case Mode::any:
        return true;
    case Mode::none:
        return false;
    case Mode::hosts:
        break;
    }
    const std::string h = normalised(host);
    return std::any_of(decl.hosts.begin(), decl.hosts.end(),
                       [&](const workspace::HostPattern& p) { return matches(p, h, port); });
}

bool is_loopback(std::string_view address)
{
    const std::string a = normalised(address);
    return a == "localhost" || a == "::1" || a.starts_with("127.");
}

}  // namespace qk::rules
