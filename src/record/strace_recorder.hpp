// The strace engine: runs the command under `strace -f` in its own cgroup and parses the output into
// the same events the eBPF engine produces. The fallback where eBPF cannot load.
// strace's child becomes the command, so the command inherits strace's environment, stdio and process
// group (strace leads the group). strace's own messages share the command's stderr: with -o and -q it
// prints none, except when the child cannot exec the program; the checks before it starts catch a
// missing or non-executable one, not a file exec rejects (ENOEXEC), whose "strace: exec:" line lands in
// the command's output.
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
