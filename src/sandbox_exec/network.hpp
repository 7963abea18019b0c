// The command's network where its target declares one (SandboxPlan::network): a network namespace of its own
// (made with the other namespaces), loopback up and no other interface, so no route out; with a list, a
// listening socket on that loopback handed to the run's filtering proxy, the one way out.
#pragma once

#include <cstdint>
#include <string>

#include "qk/util/unique_fd.hpp"
#include "setup_error.hpp"

namespace qk::sandbox_exec {

// Connects to the run's proxy at `path`, before any namespace is made: the path lies in the run's
// directory, which the covers hide from the command's mount namespace.
Step connect_proxy(const std::string& path, UniqueFd& out);

// In the command's new network namespace: its loopback brought up; with `proxy` (a connection from
// connect_proxy), a listening TCP socket on 127.0.0.1 at a port the kernel picks, handed to the proxy under
// `token`, and `port` set once the proxy has taken it.
Step set_up_network(int proxy, const std::string& token, std::uint16_t& port);

// The probe's step: in a child, a network namespace made and its loopback brought up, as a command's is.
Step try_network_namespace();

// HTTP_PROXY, HTTPS_PROXY (and lower case), NODE_USE_ENV_PROXY for Node.js 24 and later, and no NO_PROXY:
// what tools that honour a proxy read.
void set_proxy_environment(std::uint16_t port);

}  // namespace qk::sandbox_exec
