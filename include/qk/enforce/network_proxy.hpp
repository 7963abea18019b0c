// The run's filtering proxy for tasks that declare a network list (issue 42): each of their commands runs in a
// network namespace of its own (qk-sandbox-exec), whose only way out is a listening socket on its own
// loopback that the helper hands to this proxy. The proxy serves plain HTTP (a request with an absolute URL)
// and CONNECT (HTTPS and any other TCP), asks the task's `allows` for every request, refuses the rest with an
// HTTP 403 naming the host and the declaration to add, and records each refusal for the run's report.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::enforce {

// The helper's word to the proxy on its unix socket, one message with the listening socket attached
// (SCM_RIGHTS): "qk-net 1 TOKEN\n". The proxy answers "ok\n" once it serves it, or "refused WHY\n". The
// listener is served as long as the connection that handed it stays open (the helper's life).
inline constexpr std::string_view kProxyHello = "qk-net 1 ";
inline constexpr std::string_view kProxyOk = "ok\n";

// The helper's side (network_handover.cpp, compiled into qk-sandbox-exec too): hands `listener` to the proxy
// on `proxy` under `token` and waits for its answer, so that a command never starts with a way out the
// proxy does not serve (its connections would wait for ever). The error says what the proxy said.
Status hand_listener_to_proxy(int proxy, int listener, std::string_view token);

struct NetworkRefusal {
    std::string host;
    std::uint16_t port = 0;
    std::string why;  // the sentence the task was told
    friend bool operator==(const NetworkRefusal&, const NetworkRefusal&) = default;
};

class NetworkProxy {
public:
    // Whether the task may reach host:port (rules::network_allows over its declaration).
    using Allows = std::function<bool(std::string_view host, std::uint16_t port)>;

    // Listens on `socket_path` (a unix socket, in the run's directory, which every command's covers keep
    // out of reach) and serves from a thread of its own until destroyed.
    static Result<std::unique_ptr<NetworkProxy>> start(const std::string& socket_path);
    ~NetworkProxy();
    NetworkProxy(const NetworkProxy&) = delete;
    NetworkProxy& operator=(const NetworkProxy&) = delete;

    const std::string& socket_path() const;
    // A task's list, under a token the plan carries (random: nothing else names it). `declaration` is how the
    // refusal names what to add ("qk:sandbox" network of the target, or nx.json's).
    std::string add_task(std::string task_id, std::string declaration, Allows allows);
    // Its refusals so far, and the token forgotten (its commands have ended).
    std::vector<NetworkRefusal> remove_task(const std::string& token);

    struct State;

private:
    explicit NetworkProxy(std::shared_ptr<State> state);
    std::shared_ptr<State> state_;
};

}  // namespace qk::enforce
