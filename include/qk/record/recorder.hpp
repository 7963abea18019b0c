// Recorder: runs a command in a cgroup of its own and records every file it and its children touch.
// Engines: eBPF (src/record/ebpf_*), strace (src/record/strace_*), replay (recorded events, for tests).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qk/record/recording.hpp"
#include "qk/util/result.hpp"

namespace qk::record {

struct Command {
    std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
    std::string cwd;                // absolute
};

struct ExitStatus {
    int code = 0;    // when signal == 0
    int signal = 0;  // the signal that killed the command, or 0
};

struct Trace {
    std::string recorder;  // "ebpf", "strace", "replay"
    ExitStatus status;
    Recording recording;
    int leftovers_killed = 0;  // processes still in the cgroup when the command exited
};

class Recorder {
public:
    virtual ~Recorder() = default;
    virtual std::string_view name() const = 0;
    // Runs `cmd` to completion and returns what it did. Safe to call from several threads at once.
    // An Error means the command could not be run at all (it does not exist, cannot be spawned).
    virtual Result<Trace> record(const Command& cmd) = 0;
};

enum class RecorderChoice { Auto, Ebpf, Strace };

// Parses "auto", "ebpf", "strace".
Result<RecorderChoice> parse_recorder_choice(std::string_view text);

// The recorder `choice` asks for. With Auto: eBPF where it loads, else strace, else none (nullptr)
// and `why_none` says why. A recorder named explicitly that cannot record is an Error.
Result<std::unique_ptr<Recorder>> make_recorder(RecorderChoice choice, std::string* why_none = nullptr);

}  // namespace qk::record
