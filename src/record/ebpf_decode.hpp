// Decoding one ring-buffer record of the BPF recorder (bpf/events.h) into recorder-neutral events.
// Records are checked for size before they are read: a malformed one is an Error, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>

#include "qk/record/events.hpp"
#include "qk/record/recording_sink.hpp"
#include "qk/util/result.hpp"

namespace qk::record {

struct EbpfRecord {
    std::uint64_t cgroup_id = 0;
    std::variant<FsOp, ProcFork, ProcExec, ProcExit, NetOp> event;
};

Result<EbpfRecord> decode_ebpf_record(const void* data, std::size_t size);

// Hands the decoded event to the sink.
void deliver(const EbpfRecord& record, RecordingSink& sink);

}  // namespace qk::record
