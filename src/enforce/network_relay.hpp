// One connection a command made to the run's proxy: its request read, judged by the task's list, refused
// with a 403 the task can read, or connected to its host and relayed both ways until either side ends.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "qk/enforce/network_proxy.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::enforce::detail {

// What a request asks for: CONNECT host:port, or a plain HTTP request with an absolute URL.
struct ProxyRequest {
    bool tunnel = false;      // CONNECT
    std::string host;         // as asked, brackets of an IPv6 address removed
    std::uint16_t port = 0;
    std::string head;         // plain HTTP: the head to send the server (origin form, Connection: close)
};

// Parses the head of a request (up to and including its blank line). An error says what the proxy takes.
Result<ProxyRequest> parse_proxy_request(std::string_view head);

struct RelayTask {
    std::string task_id;
    std::string declaration;  // where to add a host, for the refusal's words
    NetworkProxy::Allows allows;
    std::function<void(NetworkRefusal)> refused;  // records a refusal for the run's report
};

// Serves `client` to its end. `stop` (an eventfd) becomes readable when the proxy is closing.
void relay_connection(UniqueFd client, const RelayTask& task, int stop);

}  // namespace qk::enforce::detail
