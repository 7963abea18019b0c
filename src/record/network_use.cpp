#include "qk/record/network_use.hpp"

namespace qk::record {

void NetworkUse::add(const Endpoint& to, pid_t pid, bool reached)
{
    auto [it, added] = endpoints_.try_emplace(to);
    if (added)
        it->second.pid = pid;
    ++it->second.count;
    it->second.reached = it->second.reached || reached;
}

void NetworkUse::add_answer(std::string address, const std::string& name)
{
    answers_.try_emplace(std::move(address), name);
}

void NetworkUse::merge(const NetworkUse& other)
{
    for (const auto& [to, use] : other.endpoints_) {
        auto [it, added] = endpoints_.try_emplace(to, use);
        if (!added) {
            it->second.count += use.count;
            it->second.reached = it->second.reached || use.reached;
        }
    }
    lookups_.insert(other.lookups_.begin(), other.lookups_.end());
    answers_.insert(other.answers_.begin(), other.answers_.end());
}

std::string_view NetworkUse::host_of(std::string_view address) const
{
    auto it = answers_.find(address);
    return it == answers_.end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace qk::record
