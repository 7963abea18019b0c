// What a recorded command did on the network: the connections it opened (a TCP or UDP connect, a UDP
// datagram sent to an address), the names it looked up over DNS and the addresses those resolved to. It
// judges nothing (qk/rules/network.hpp does): it says what the recorder saw.
#pragma once

#include <sys/types.h>

#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace qk::record {

struct Endpoint {
    std::string address;  // "10.0.0.1", "2001:db8::1"
    std::uint16_t port = 0;
    bool datagram = false;  // UDP; otherwise TCP
    auto operator<=>(const Endpoint&) const = default;
};

struct EndpointUse {
    std::uint32_t count = 0;  // connects and datagrams to it
    pid_t pid = 0;            // the first process that reached it
    // Whether one succeeded (a connect that returned 0 or EINPROGRESS, a datagram sent); a refused one
    // (ECONNREFUSED, ENETUNREACH) is still an attempt to reach it.
    bool reached = false;
};

class NetworkUse {
public:
    void add(const Endpoint& to, pid_t pid, bool reached);
    // A DNS query for `name`, and an answer saying `name` resolves to `address` (A or AAAA records).
    void add_lookup(std::string name) { lookups_.insert(std::move(name)); }
    void add_answer(std::string address, const std::string& name);
    void merge(const NetworkUse& other);

    const std::map<Endpoint, EndpointUse>& endpoints() const { return endpoints_; }
    const std::set<std::string>& lookups() const { return lookups_; }
    // The name this command looked up that resolved to `address` (the first such); empty when none.
    std::string_view host_of(std::string_view address) const;
    bool empty() const { return endpoints_.empty() && lookups_.empty(); }

private:
    std::map<Endpoint, EndpointUse> endpoints_;
    std::set<std::string> lookups_;
    std::map<std::string, std::string, std::less<>> answers_;  // address -> name
};

}  // namespace qk::record
