// "qk:sandbox": { "network": ... } and nx.json's "qk": { "sandbox": { "network": ... } }: the patterns'
// syntax, checked where each file is read so a message names its line, and the declaration a target ends
// with (its own or its targetDefaults', else the workspace's, else undeclared).
#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "config_loader.hpp"
#include "config_validate.hpp"
#include "qk/workspace/network.hpp"

namespace qk::workspace {
namespace {

constexpr std::string_view kExpected = "false, true or a list of hosts such as [\"registry.npmjs.org\", "
                                       "\"*.example.com:443\"]";

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// A DNS name or an IPv4 address: labels of letters, digits, '-' and '_' (names some registries use),
// none empty or over 63, 253 in all.
bool valid_name(std::string_view name)
{
    if (name.empty() || name.size() > 253)
        return false;
    std::size_t label = 0;
    for (char c : name) {
        if (c == '.') {
            if (label == 0)
                return false;
            label = 0;
            continue;
        }
        const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!ok || ++label > 63)
            return false;
    }
    return label != 0;
}

bool valid_ipv6(std::string_view addr)
{
    return !addr.empty() && addr.find(':') != std::string_view::npos &&
           std::all_of(addr.begin(), addr.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.';
           });
}

Result<std::uint16_t> parse_port(std::string_view text, std::string_view pattern)
{
    unsigned port = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || port == 0 || port > 65535)
        return error(fmt::format("\"{}\": the port must be a number from 1 to 65535, such as \"{}:443\"; leave "
                                 "it out to allow every port",
                                 pattern, pattern.substr(0, pattern.size() - text.size() - 1)));
    return static_cast<std::uint16_t>(port);
}

}  // namespace

Result<HostPattern> parse_host_pattern(std::string_view text)
{
    HostPattern p;
    p.text = std::string(text);
    if (text.find("://") != std::string_view::npos || text.find('/') != std::string_view::npos)
        return error(fmt::format("\"{}\" is not a host: write the host name alone, as \"registry.npmjs.org\" or "
                                 "\"registry.npmjs.org:443\", without a scheme or a path",
                                 text));
    std::string s;
    s.reserve(text.size());
    std::transform(text.begin(), text.end(), std::back_inserter(s), lower);
    std::string_view rest = s;
    std::string_view host;
    if (!rest.empty() && rest.front() == '[') {  // "[::1]" or "[::1]:8080"
        auto close = rest.find(']');
        if (close == std::string_view::npos)
            return error(fmt::format("\"{}\": an IPv6 address in brackets needs its \"]\", as \"[::1]:8080\"", text));
        host = rest.substr(1, close - 1);
        rest.remove_prefix(close + 1);
        if (!valid_ipv6(host))
            return error(fmt::format("\"{}\": \"{}\" is not an IPv6 address", text, host));
        if (!rest.empty() && rest.front() != ':')
            return error(fmt::format("\"{}\": only \":port\" may follow the \"]\"", text));
    } else {
        auto colon = rest.rfind(':');
        if (colon != std::string_view::npos && rest.find(':') != colon)
            return error(fmt::format("\"{}\": write an IPv6 address in brackets, as \"[::1]\" or \"[::1]:8080\"", text));
        host = rest.substr(0, colon == std::string_view::npos ? rest.size() : colon);
        rest.remove_prefix(host.size());
        if (host.ends_with('.'))
            host.remove_suffix(1);  // "example.com." is example.com
        if (host.starts_with("*.")) {
            p.subdomains = true;
            host.remove_prefix(2);
        }
        if (host == "*" || host.empty())
            return error(fmt::format("\"{}\" names no host: to allow every host, declare \"network\": true", text));
        if (host.find('*') != std::string_view::npos)
            return error(fmt::format("\"{}\": \"*\" is only taken as the whole first label, as \"*.example.com\", "
                                     "which matches every name under example.com",
                                     text));
        if (!valid_name(host))
            return error(fmt::format("\"{}\" is not a host name: labels of letters, digits and \"-\" separated by "
                                     "dots, as \"registry.npmjs.org\", or an address, as \"127.0.0.1\"",
                                     text));
    }
    p.host = std::string(host);
    if (!rest.empty()) {
        QK_TRY(port, parse_port(rest.substr(1), text));
        p.port = *port;
    }
    return p;
}

namespace detail {

Status validate_network(const Json& value, std::string_view file, std::string_view path)
{
    if (value.is_bool())
        return {};
    if (!value.is_array())
        return shape_error(file, value, path, kExpected);
    std::size_t i = 0;
    for (const auto& item : value.as_array()) {
        const std::string where = fmt::format("{}[{}]", path, i++);
        if (!item.is_string())
            return shape_error(file, item, where, "a host such as \"registry.npmjs.org\" or \"*.example.com:443\"");
        if (auto p = parse_host_pattern(item.as_string()); !p)
            return error(fmt::format("{}:{}:{}: {}: {}", file, item.line(), item.column(), where, p.error().message));
    }
    return {};
}

NetworkDeclaration read_network(const Json* value, std::string_view source)
{
    NetworkDeclaration d;
    if (!value)
        return d;
    d.source = std::string(source);
    if (value->is_bool()) {
        d.mode = value->as_bool() ? NetworkDeclaration::Mode::any : NetworkDeclaration::Mode::none;
        return d;
    }
    d.mode = NetworkDeclaration::Mode::hosts;
    for (const auto& item : value->as_array())
        if (auto p = parse_host_pattern(item.as_string()))  // validated as the file was read
            d.hosts.push_back(std::move(*p));
    return d;
}

}  // namespace detail
}  // namespace qk::workspace
