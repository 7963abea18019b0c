// Interruption of a run (Ctrl-C, SIGTERM from CI, a closed terminal): the commands being recorded
// are killed through their cgroups, the recorders finish as usual, and the run reports what it saw
// and that it was interrupted. Nothing is left behind: no cgroup, no attached program.
#pragma once

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
};

}  // namespace qk::cli
