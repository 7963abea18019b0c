// Scheduler: runs the nodes of a DAG on worker threads, each once its dependencies succeeded, at most
// P at a time, lowest index first. It knows nothing of tasks: a node is an index and a callback.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::run {

enum class Outcome : std::uint8_t { succeeded, failed };

struct SchedulerNode {
    std::vector<std::size_t> deps;  // indices of earlier nodes (the input is in topological order)
    // Runs with no other node at the same time (Nx's `parallelism: false`).
    bool exclusive = false;
};

struct NodeResult {
    enum class State : std::uint8_t { succeeded, failed, skipped, cancelled };
    static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

    State state = State::cancelled;
    // skipped: the failed node it waited for, directly or not; the lowest index when there are several,
    // so the answer does not depend on which failure happened first.
    std::size_t because = none;
};

class Scheduler {
public:
    using RunFn = std::function<Outcome(std::size_t node)>;
    // Told of each node that will not run, from the thread that decided it, outside the lock.
    using NotRunFn = std::function<void(std::size_t node, const NodeResult& result)>;

    Scheduler(std::vector<SchedulerNode> nodes, std::size_t parallelism);
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Runs every node that can run and returns one result per node. Call once. `run` is called on a
    // worker thread, up to `parallelism` of them at once. An Error when the input is not a DAG in
    // topological order or the parallelism is 0. An exception thrown by `run` (FatalError) cancels
    // the run and is rethrown here once the running nodes have finished.
    Result<std::vector<NodeResult>> run(const RunFn& run, const NotRunFn& not_run = {});

    // From any thread, before or during run(): no node starts any more; the running ones finish (stop
    // their commands yourself) and every other node ends `cancelled`.
    void cancel();

private:
    struct Settled {
        std::size_t node;
        NodeResult result;
    };

    Status validate() const;
    void worker(const RunFn& run, const NotRunFn& not_run);
    // Under the lock: the lowest ready node allowed to start now, or none.
    std::size_t pick_locked() const;
    // Under the lock: records a node's end and settles the dependents that decides; adds the nodes
    // that will not run to `not_run`, for NotRunFn.
    void settle_locked(std::size_t node, NodeResult result, std::vector<Settled>& not_run);
    void cancel_ready_locked(std::vector<Settled>& not_run);

    std::vector<SchedulerNode> nodes_;
    std::vector<std::vector<std::size_t>> dependents_;
    std::size_t parallelism_;

    std::mutex mutex_;
    std::condition_variable changed_;
    bool started_ = false;
    bool cancelled_ = false;
    std::vector<NodeResult> results_;
    std::vector<std::size_t> unsettled_deps_;
    std::set<std::size_t> ready_;
    std::size_t settled_count_ = 0;
    std::size_t running_ = 0;
    bool exclusive_running_ = false;
    std::exception_ptr exception_;
};

}  // namespace qk::run
