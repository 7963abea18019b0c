// SandboxEnforce's part for a target that declares its network (docs/sandbox.md, "The network"): false runs
// each command in a network namespace of its own with loopback only; a list does the same and gives it one
// way out, the run's filtering proxy, which asks rules::network_allows of every request.
#include <algorithm>

#include <fmt/format.h>

#include "qk/enforce/probe.hpp"
#include "qk/rules/network.hpp"
#include "qk/util/path_within.hpp"
#include "sandbox_enforce.hpp"

namespace qk::sandbox {

namespace {

// Where the task's declaration is, for the words of a refusal: the place to add a host.
std::string declared_where(const workspace::NetworkDeclaration& d)
{
    return d.source == "workspace" ? "nx.json's \"qk\": {\"sandbox\": {\"network\": [...]}}"
                                   : "\"qk:sandbox\": {\"network\": [...]} of its target";
}

}  // namespace

void SandboxEnforce::note_network_namespace(const enforce::ProbeReport& report)
{
    network_namespace_ = report.network_namespace() && (overlay_ || user_namespace_);
    if (!network_namespace_) {
        auto netns = std::find_if(report.steps.begin(), report.steps.end(),
                                  [](const enforce::ProbeStep& s) { return s.stage == "netns"; });
        auto failed = report.first_failure();
        no_network_namespace_ =
            netns != report.steps.end() && !netns->ok ? netns->message
            : !overlay_ && !user_namespace_
                ? "its commands are held by Landlock alone without a user namespace, where none can be made"
                : fmt::format("the probe made no user namespace to make it in{}",
                              failed ? fmt::format(" ({}: {})", failed->stage, failed->message) : std::string());
    }
}

Status SandboxEnforce::plan_network(const workspace::Task& t, enforce::SandboxPlan& plan, std::string& token)
{
    const workspace::NetworkDeclaration& declared = t.target->sandbox.network;
    if (declared.open())
        return {};
    if (!network_namespace_)
        return error(fmt::format("it declares its network ({}), which enforce holds in a network namespace of its "
                                 "own, and none can be made here: {}; declare \"network\": true to run it open",
                                 declared.mode == workspace::NetworkDeclaration::Mode::none ? "false" : "a list",
                                 no_network_namespace_));
    using Network = enforce::SandboxPlan::Network;
    if (declared.mode == workspace::NetworkDeclaration::Mode::none) {
        plan.network = Network::none;
        return {};
    }
    std::lock_guard lock(mutex_);
    if (!proxy_) {
        // In the run's directory, which every command's covers hide: no task reaches another's hand-over.
        auto started = enforce::NetworkProxy::start((dir_->run_dir() / "network-proxy").string());
        if (!started)
            return error("the run's network proxy cannot start: " + started.error().message);
        proxy_ = std::move(started).value();
    }
    token = proxy_->add_task(t.id, declared_where(declared), [declared](std::string_view host, std::uint16_t port) {
        return rules::network_allows(declared, host, port);
    });
    plan.network = Network::proxy;
    plan.proxy = proxy_->socket_path();
    plan.proxy_token = token;
    return {};
}

std::vector<enforce::NetworkRefusal> SandboxEnforce::network_refusals(const std::string& token)
{
    std::lock_guard lock(mutex_);
    return token.empty() || !proxy_ ? std::vector<enforce::NetworkRefusal>{} : proxy_->remove_task(token);
}

}  // namespace qk::sandbox
