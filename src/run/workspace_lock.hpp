// WorkspaceLock: one run at a time in a workspace. Two runs at once would run the same task side by side,
// interleave its output and store a cache entry mixing files of both. Held by flock on .qk/run.lock, so
// it goes with the process however it ends (a kill -9 included); the file holds the holder's pid, for
// the message.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>

#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::run {

class WorkspaceLock {
public:
    struct Options {
        bool wait = true;                                // false: --no-wait, an Error when it is held
        std::function<void(const std::string&)> waiting;  // told once, when it has to wait
        // The signal that stopped the run (0: none), set from another thread: ends the wait at once.
        const std::atomic<int>* interrupted = nullptr;
    };
    // `root`/.qk must exist (LocalCache::open makes it).
    static Result<WorkspaceLock> acquire(const std::filesystem::path& root, const Options& options);

private:
    explicit WorkspaceLock(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
};

}  // namespace qk::run
