// The DAG scheduler: order, the parallelism limit, failures skipping their dependents, cancel.
// Concurrency is observed with handshakes (a node waits for the others it expects), never with sleeps.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "run/scheduler.hpp"

using namespace qk::run;
using State = NodeResult::State;

namespace {

std::vector<SchedulerNode> dag(std::vector<std::vector<std::size_t>> deps)
{
    std::vector<SchedulerNode> nodes;
    for (auto& d : deps)
        nodes.push_back({std::move(d), false});
    return nodes;
}

std::vector<NodeResult> run_ok(Scheduler& s, const Scheduler::RunFn& fn, const Scheduler::NotRunFn& not_run = {})
{
    auto r = s.run(fn, not_run);
    REQUIRE(r);
    return *r;
}

}  // namespace

TEST_CASE("scheduler: one at a time, ready nodes start in index order after their deps", "[run][scheduler]")
{
    Scheduler s(dag({{}, {0}, {}, {1, 2}, {0}}), 1);
    std::vector<std::size_t> order;
    auto results = run_ok(s, [&](std::size_t n) {
        order.push_back(n);
        return Outcome::succeeded;
    });
    // Ready at first: 0 and 2; 0 releases 1 and 4, which come before 2 only by index.
    CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 4});
    for (const auto& r : results)
        CHECK(r.state == State::succeeded);
}

TEST_CASE("scheduler: with several workers a node still starts only after its deps finished", "[run][scheduler]")
{
    // A wide, layered DAG: node i depends on i-3, i-5 and i-7 where they exist.
    std::vector<std::vector<std::size_t>> deps(60);
    for (std::size_t i = 0; i < deps.size(); ++i)
        for (std::size_t back : {3, 5, 7})
            if (i >= back)
                deps[i].push_back(i - back);
    Scheduler s(dag(deps), 4);
    std::vector<std::atomic<bool>> done(deps.size());
    std::atomic<int> violations{0};
    auto results = run_ok(s, [&](std::size_t n) {
        for (std::size_t d : deps[n])
            if (!done[d])
                ++violations;
        done[n] = true;
        return Outcome::succeeded;
    });
    CHECK(violations == 0);
    CHECK(std::all_of(results.begin(), results.end(), [](auto& r) { return r.state == State::succeeded; }));
}

TEST_CASE("scheduler: the parallelism limit is reached and never exceeded", "[run][scheduler]")
{
    const std::size_t limit = 3, total = 10;
    Scheduler s(dag(std::vector<std::vector<std::size_t>>(total)), limit);
    std::mutex m;
    std::condition_variable cv;
    std::size_t running = 0, started = 0, most = 0;
    run_ok(s, [&](std::size_t) {
        std::unique_lock lock(m);
        ++started;
        most = std::max(most, ++running);
        cv.notify_all();
        // Each node waits until the limit is reached (or nothing is left to start): were the
        // scheduler to start more, `most` would show it; were it to start fewer, this would hang.
        cv.wait(lock, [&] { return running == limit || started == total; });
        --running;
        return Outcome::succeeded;
    });
    CHECK(most == limit);
}

TEST_CASE("scheduler: a failure skips exactly its transitive dependents, the rest runs", "[run][scheduler]")
{
    //   0 ok    1 FAILS    6 ok    7 FAILS
    //   |  \     |                  |
    //   4   \    2                  |
    //        \   |                  |
    //         \  3 ----------.      |
    //          5 (0, 3)       8 (7, 3)
    Scheduler s(dag({{}, {}, {1}, {2}, {0}, {0, 3}, {}, {}, {7, 3}}), 2);
    std::mutex m;
    std::vector<std::size_t> ran;
    std::vector<std::pair<std::size_t, NodeResult>> told;
    auto results = run_ok(
        s,
        [&](std::size_t n) {
            std::lock_guard lock(m);
            ran.push_back(n);
            return n == 1 || n == 7 ? Outcome::failed : Outcome::succeeded;
        },
        [&](std::size_t n, const NodeResult& r) {
            std::lock_guard lock(m);
            told.emplace_back(n, r);
        });
    std::sort(ran.begin(), ran.end());
    CHECK(ran == std::vector<std::size_t>{0, 1, 4, 6, 7});
    CHECK(results[0].state == State::succeeded);
    CHECK(results[1].state == State::failed);
    CHECK(results[7].state == State::failed);
    for (std::size_t n : {2, 3, 5}) {
        CHECK(results[n].state == State::skipped);
        CHECK(results[n].because == 1);
    }
    // Two failures upstream: the lowest index is named, whichever failed first.
    CHECK(results[8].state == State::skipped);
    CHECK(results[8].because == 1);
    std::sort(told.begin(), told.end(), [](auto& a, auto& b) { return a.first < b.first; });
    REQUIRE(told.size() == 4);
    CHECK(told[0].first == 2);
    CHECK(told[3].first == 8);
    CHECK(told[3].second.state == State::skipped);
}

TEST_CASE("scheduler: cancel lets the running node finish and cancels the rest", "[run][scheduler]")
{
    Scheduler s(dag({{}, {0}, {}}), 1);
    std::mutex m;
    std::condition_variable cv;
    bool node_started = false, cancel_sent = false;
    std::thread canceller([&] {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return node_started; });
        s.cancel();  // as a signal-handling thread would
        cancel_sent = true;
        cv.notify_all();
    });
    std::vector<std::size_t> ran;
    std::size_t told = 0;
    auto results = run_ok(
        s,
        [&](std::size_t n) {
            ran.push_back(n);
            std::unique_lock lock(m);
            node_started = true;
            cv.notify_all();
            cv.wait(lock, [&] { return cancel_sent; });
            return Outcome::succeeded;
        },
        [&](std::size_t, const NodeResult& r) {
            CHECK(r.state == State::cancelled);
            ++told;
        });
    canceller.join();
    CHECK(ran == std::vector<std::size_t>{0});
    CHECK(results[0].state == State::succeeded);
    CHECK(results[1].state == State::cancelled);
    CHECK(results[2].state == State::cancelled);
    CHECK(told == 2);
}

TEST_CASE("scheduler: cancelled before it runs, nothing runs", "[run][scheduler]")
{
    Scheduler s(dag({{}, {0}}), 2);
    s.cancel();
    bool called = false;
    auto results = run_ok(s, [&](std::size_t) {
        called = true;
        return Outcome::succeeded;
    });
    CHECK_FALSE(called);
    CHECK(results[0].state == State::cancelled);
    CHECK(results[1].state == State::cancelled);
}

TEST_CASE("scheduler: an exclusive node runs alone", "[run][scheduler]")
{
    auto nodes = dag(std::vector<std::vector<std::size_t>>(8));
    nodes[0].exclusive = true;
    nodes[5].exclusive = true;
    Scheduler s(std::move(nodes), 4);
    std::atomic<int> running{0};
    std::atomic<int> exclusive_running{0};
    std::atomic<int> overlaps{0};
    run_ok(s, [&](std::size_t n) {
        bool exclusive = n == 0 || n == 5;
        int now = ++running;
        if (exclusive) {
            ++exclusive_running;
            if (now != 1)
                ++overlaps;
            // Give idle workers every chance to start something they must not.
            for (int i = 0; i < 1000; ++i)
                std::this_thread::yield();
            if (running != 1)
                ++overlaps;
            --exclusive_running;
        } else if (exclusive_running) {
            ++overlaps;
        }
        --running;
        return Outcome::succeeded;
    });
    CHECK(overlaps == 0);
}

TEST_CASE("scheduler: bad input is an error; an exception from a node comes back out of run", "[run][scheduler]")
{
    Scheduler backwards(dag({{1}, {}}), 2);
    auto r = backwards.run([](std::size_t) { return Outcome::succeeded; });
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("topological order") != std::string::npos);

    Scheduler none(dag({{}}), 0);
    CHECK_FALSE(none.run([](std::size_t) { return Outcome::succeeded; }));

    Scheduler throwing(dag({{}, {0}, {}}), 1);
    std::vector<std::size_t> ran;
    CHECK_THROWS_AS(throwing.run([&](std::size_t n) -> Outcome {
        ran.push_back(n);
        throw qk::FatalError("gave up");
    }),
                    qk::FatalError);
    CHECK(ran == std::vector<std::size_t>{0});  // the run was cancelled: 2 never started

    Scheduler empty({}, 3);
    auto e = empty.run([](std::size_t) { return Outcome::succeeded; });
    REQUIRE(e);
    CHECK(e->empty());
}

TEST_CASE("scheduler: a dependency listed twice releases its dependent once", "[run][scheduler]")
{
    Scheduler s(dag({{}, {0, 0}}), 2);
    std::atomic<int> runs{0};
    auto results = run_ok(s, [&](std::size_t) {
        ++runs;
        return Outcome::succeeded;
    });
    CHECK(runs == 2);
    CHECK(results[1].state == State::succeeded);
}
