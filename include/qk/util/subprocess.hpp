// A short helper program run to completion with its output captured: strace's probes, the sandbox's
// probe, git. (Tasks go through record::spawn, which is another matter.)
#pragma once

#include <string>
#include <vector>

#include "qk/util/result.hpp"

namespace qk {

struct Captured {
    int wait_status = -1;  // as waitpid gives it
    std::string out;       // stdout, and stderr too when merged
    std::string err;       // stderr when kept apart
    bool succeeded() const;  // exited with status 0
};

struct CaptureOptions {
    enum class Stderr { merged, apart, inherited };
    Stderr stderr_to = Stderr::merged;
    bool search_path = false;  // argv[0] looked up in PATH (posix_spawnp) rather than taken as a path
    std::string cwd;           // where it runs; empty: here
};

// stdin is /dev/null. An Error when the program cannot be started (its errno kept), not when it fails.
Result<Captured> run_captured(const std::vector<std::string>& argv, const CaptureOptions& options = {});

}  // namespace qk
