// The little of a DNS message (RFC 1035) the recorder reads from a datagram sent to or received from
// port 53: the name asked, and in an answer the addresses it resolved to. A payload that is not a DNS
// message, or is cut short, gives what could be read of it, or nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qk::record {

struct DnsMessage {
    std::string question;                // "registry.npmjs.org" (lower case, no trailing dot)
    std::vector<std::string> addresses;  // A and AAAA answers, as text
};

std::optional<DnsMessage> parse_dns_message(std::string_view bytes);

}  // namespace qk::record
