// The strace engine: runs the command under `strace -f` in its own cgroup and parses the output into
// the same events the eBPF engine produces. The fallback where eBPF cannot load.
#pragma once

#include <memory>

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
};

}  // namespace qk::record
