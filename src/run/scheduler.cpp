#include "scheduler.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

namespace qk::run {

namespace {
constexpr std::size_t kNone = NodeResult::none;
}

Scheduler::Scheduler(std::vector<SchedulerNode> nodes, std::size_t parallelism)
    : nodes_(std::move(nodes)), parallelism_(parallelism)
{
}

Status Scheduler::validate() const
{
    if (parallelism_ == 0)
        return error("the parallelism must be at least 1");
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        for (std::size_t d : nodes_[i].deps)
            if (d >= i)
                return error(fmt::format("node {} depends on node {}, which does not come before it; the scheduler "
                                         "needs the nodes in topological order",
                                         i, d));
    return {};
}

Result<std::vector<NodeResult>> Scheduler::run(const RunFn& run, const NotRunFn& not_run)
{
    QK_TRY_STATUS(validate());
    const std::size_t n = nodes_.size();
    std::vector<Settled> initially_not_run;
    {
        std::lock_guard lock(mutex_);
        if (started_)
            return error("Scheduler::run was called twice; make a new Scheduler for each run");
        started_ = true;
        results_.assign(n, NodeResult{});
        unsettled_deps_.assign(n, 0);
        dependents_.assign(n, {});
        for (std::size_t i = 0; i < n; ++i) {
            // A node listing the same dependency twice must still be released once.
            std::vector<std::size_t> deps = nodes_[i].deps;
            std::sort(deps.begin(), deps.end());
            deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
            nodes_[i].deps = deps;
            unsettled_deps_[i] = deps.size();
            for (std::size_t d : deps)
                dependents_[d].push_back(i);
        }
        for (std::size_t i = 0; i < n; ++i)
            if (unsettled_deps_[i] == 0)
                ready_.insert(i);
        if (cancelled_)
            cancel_ready_locked(initially_not_run);
    }
    if (not_run)
        for (const auto& s : initially_not_run)
            not_run(s.node, s.result);

    std::vector<std::thread> workers;
    std::size_t count = std::min(parallelism_, n);
    workers.reserve(count);
    for (std::size_t i = 0; i < count; ++i)
        workers.emplace_back([this, &run, &not_run] { worker(run, not_run); });
    for (auto& w : workers)
        w.join();

    std::lock_guard lock(mutex_);
    if (exception_)
        std::rethrow_exception(exception_);
    return results_;
}

void Scheduler::cancel()
{
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    changed_.notify_all();
}

void Scheduler::worker(const RunFn& run, const NotRunFn& not_run)
{
    std::unique_lock lock(mutex_);
    for (;;) {
        std::vector<Settled> not_run_now;
        std::size_t node = kNone;
        if (cancelled_)
            cancel_ready_locked(not_run_now);
        if (not_run_now.empty() && settled_count_ < nodes_.size())
            node = pick_locked();

        if (not_run_now.empty() && node == kNone) {
            if (settled_count_ == nodes_.size())
                return;
            changed_.wait(lock);
            continue;
        }

        if (node != kNone) {
            ready_.erase(node);
            ++running_;
            exclusive_running_ = nodes_[node].exclusive;
            lock.unlock();
            Outcome outcome = Outcome::failed;
            std::exception_ptr thrown;
            try {
                outcome = run(node);
            } catch (...) {
                thrown = std::current_exception();
            }
            lock.lock();
            if (thrown) {
                if (!exception_)
                    exception_ = thrown;
                cancelled_ = true;
            }
            --running_;
            if (nodes_[node].exclusive)
                exclusive_running_ = false;
            NodeResult result;
            result.state = outcome == Outcome::succeeded ? NodeResult::State::succeeded : NodeResult::State::failed;
            settle_locked(node, result, not_run_now);
        }
        changed_.notify_all();
        if (!not_run_now.empty() && not_run) {
            lock.unlock();
            for (const auto& s : not_run_now)
                not_run(s.node, s.result);
            lock.lock();
        }
    }
}

std::size_t Scheduler::pick_locked() const
{
    if (exclusive_running_)
        return kNone;
    // A worker only asks when it is idle, so fewer than `parallelism_` nodes are running here.
    for (std::size_t node : ready_)
        if (!nodes_[node].exclusive || running_ == 0)
            return node;
    return kNone;
}

// A dependent is decided once all its dependencies are settled, not at the first failure: that way
// the failure it names (the lowest index) is the same whatever order the failures happened in. A
// worklist rather than recursion: a long chain of skipped nodes must not exhaust a worker's stack.
void Scheduler::settle_locked(std::size_t node, NodeResult result, std::vector<Settled>& not_run)
{
    std::vector<Settled> work{{node, result}};
    while (!work.empty()) {
        Settled s = work.back();
        work.pop_back();
        results_[s.node] = s.result;
        ++settled_count_;
        if (s.result.state == NodeResult::State::skipped || s.result.state == NodeResult::State::cancelled)
            not_run.push_back(s);
        for (std::size_t dependent : dependents_[s.node]) {
            if (--unsettled_deps_[dependent] != 0)
                continue;
            std::size_t because = kNone;
            bool dep_cancelled = false;
            for (std::size_t d : nodes_[dependent].deps) {
                const NodeResult& r = results_[d];
                if (r.state == NodeResult::State::failed)
                    because = std::min(because, d);
                else if (r.state == NodeResult::State::skipped)
                    because = std::min(because, r.because);
                else if (r.state == NodeResult::State::cancelled)
                    dep_cancelled = true;
            }
            if (because != kNone)
                work.push_back({dependent, {NodeResult::State::skipped, because}});
            else if (dep_cancelled || cancelled_)
                work.push_back({dependent, {NodeResult::State::cancelled, kNone}});
            else
                ready_.insert(dependent);
        }
    }
    std::sort(not_run.begin(), not_run.end(), [](const Settled& a, const Settled& b) { return a.node < b.node; });
}

void Scheduler::cancel_ready_locked(std::vector<Settled>& not_run)
{
    std::vector<std::size_t> ready(ready_.begin(), ready_.end());
    ready_.clear();
    for (std::size_t node : ready)
        settle_locked(node, {NodeResult::State::cancelled, kNone}, not_run);
}

}  // namespace qk::run
