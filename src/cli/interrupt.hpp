// Interruption of a run (Ctrl-C, SIGTERM from CI, a closed terminal): the commands being recorded
// are killed through their cgroups, the recorders finish as usual, and the run reports what it saw
// and that it was interrupted. Nothing is left behind: no cgroup, no attached program.
#pragma once

#include <atomic>
#include <functional>

namespace qk::cli {

class InterruptWatch {
public:
    // Call first in main(), before any thread starts: it blocks SIGINT, SIGTERM and SIGHUP in every
    // thread and handles them on a thread of its own. A second signal ends the process at once.
    InterruptWatch();
    ~InterruptWatch();
    InterruptWatch(const InterruptWatch&) = delete;
    InterruptWatch& operator=(const InterruptWatch&) = delete;

    // The signal that interrupted the run, or 0.
    static int signal();
    // The same, for code that must not know this class (a run waiting for the workspace lock).
    static const std::atomic<int>& signal_flag();
    // Called on the watcher thread at the first signal, after the task cgroups are killed: how a runner
    // stops starting tasks and stops the commands it started without a cgroup. Set it before work starts.
    static void on_interrupt(std::function<void()> callback);
};

}  // namespace qk::cli
