// The eBPF engine: the command runs in a cgroup of its own and the BPF programs, filtering by that
// cgroup in the kernel, report every file operation of it and everything it starts.
#pragma once

#include <memory>

#include "qk/record/recorder.hpp"
#include "ebpf_session.hpp"

namespace qk::record {

class EbpfRecorder : public Recorder {
public:
    // Loads and attaches the programs; `settings` may size the ring buffer (QK_RING_BUFFER_BYTES).
    static Result<std::unique_ptr<EbpfRecorder>> create(const RecorderSettings& settings);

    std::string_view name() const override { return "ebpf"; }
    bool takes_starter() const override { return true; }
    Result<Trace> record(const Command& cmd) override;

private:
    explicit EbpfRecorder(std::unique_ptr<EbpfSession> s) : session_(std::move(s)) {}
    std::unique_ptr<EbpfSession> session_;
};

}  // namespace qk::record
