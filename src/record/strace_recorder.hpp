// The strace engine: runs the command under `strace -f` in its own cgroup and parses the output into
// the same events the eBPF engine produces. The fallback where eBPF cannot load.
#pragma once

#include <memory>
#include <string>

#include "qk/record/recorder.hpp"

namespace qk::record {

class StraceRecorder : public Recorder {
public:
    // An Error when strace is missing or cannot trace here (no ptrace permission).
    static Result<std::unique_ptr<StraceRecorder>> create();

    std::string_view name() const override { return "strace"; }
    Result<Trace> record(const Command& cmd) override;

private:
    StraceRecorder() = default;
    bool seccomp_bpf_ = false;  // whether --seccomp-bpf works here
    bool raw_constants_ = true; // whether -X raw works here (strace >= 5.15)
    std::string strace_;        // the strace binary
};

}  // namespace qk::record
