#include "qk/record/recording.hpp"

#include <algorithm>
#include <set>

namespace qk::record {

void Recording::add(std::string_view path, std::uint16_t access, pid_t pid)
{
    // What a finding or a refusal names a process for. A probe comes with a pid only where a refusal
    // may look like one (enforce over a read mask): elsewhere they are too many to keep a pid each.
    constexpr std::uint16_t kDoing = kRead | kWrite | kCreate | kRemove | kDenied | kProbe | kLinked;
    std::uint16_t before = 0;
    auto it = paths_.find(path);  // no allocation for a path seen before, as most are
    if (it == paths_.end()) {
        it = paths_.emplace(std::string(path), access).first;
    } else {
        before = it->second;
        it->second |= access;
    }
    // After a probe (which may have come without a pid) the first real access is still asked to name
    // its process; emplace keeps one named already.
    if (pid && (access & kDoing) && !(before & (kDoing & ~kProbe)))
        first_pid_.emplace(it->first, pid);
}

pid_t Recording::first_pid(std::string_view path) const
{
    auto it = first_pid_.find(path);
    return it == first_pid_.end() ? 0 : it->second;
}

std::vector<std::string> Recording::command_chain(pid_t pid) const
{
    constexpr std::size_t kMaxDepth = 16, kMaxLine = 300;
    std::vector<std::string> chain;
    std::set<pid_t> seen;
    while (pid && seen.insert(pid).second && chain.size() < kMaxDepth) {
        auto it = processes_.find(pid);
        if (it == processes_.end())
            break;
        if (!it->second.argv.empty()) {
            std::string line;
            for (const std::string& arg : it->second.argv)
                line += (line.empty() ? "" : " ") + arg;
            if (line.size() > kMaxLine)
                line = line.substr(0, kMaxLine) + "...";
            chain.push_back(std::move(line));
        }
        pid = it->second.ppid;
    }
    return chain;
}

void Recording::forget_root_commands()
{
    for (auto& [pid, p] : processes_)
        if (!processes_.contains(p.ppid))
            p.argv.clear();
}

void Recording::add_rename(std::string from, std::string to) { renames_.emplace(std::move(from), std::move(to)); }

void Recording::add_alias(std::string spelled, std::string canonical)
{
    if (spelled != canonical)
        aliases_.emplace(std::move(spelled), std::move(canonical));
}

Process& Recording::process(pid_t pid)
{
    auto [it, inserted] = processes_.try_emplace(pid);
    if (inserted)
        it->second.pid = pid;
    return it->second;
}

void Recording::mark_incomplete(std::string reason)
{
    if (std::find(incomplete_.begin(), incomplete_.end(), reason) == incomplete_.end())
        incomplete_.push_back(std::move(reason));
}

void Recording::merge(const Recording& other)
{
    for (const auto& [path, access] : other.paths_)
        paths_[path] |= access;
    renames_.insert(other.renames_.begin(), other.renames_.end());
    aliases_.insert(other.aliases_.begin(), other.aliases_.end());  // the first spelling seen wins, as in add_alias
    for (const auto& [pid, process] : other.processes_)
        processes_.insert_or_assign(pid, process);
    for (const auto& [path, pid] : other.first_pid_)  // the first command's wins; keys viewed in our paths_
        if (auto it = paths_.find(path); it != paths_.end())
            first_pid_.emplace(it->first, pid);
    for (const auto& reason : other.incomplete_)
        mark_incomplete(reason);
    lost_events_ += other.lost_events_;
    refused_calls_.insert(other.refused_calls_.begin(), other.refused_calls_.end());
    network_.merge(other.network_);
}

std::vector<const Recording::PathMap::value_type*> Recording::sorted_paths() const
{
    std::vector<const PathMap::value_type*> out;
    out.reserve(paths_.size());
    for (const auto& entry : paths_)
        out.push_back(&entry);
    std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    return out;
}

}  // namespace qk::record
