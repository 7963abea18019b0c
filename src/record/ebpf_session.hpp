// EbpfSession: the loaded and attached BPF recorder, shared by every task of a run (loading takes
// about 10 ms; a run loads once). Owns the BPF object (RAII: destroying it detaches every program),
// the ring buffer and the consumer thread that routes records to each task's sink.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "events.h"
#include "ebpf_object.h"
#include "qk/record/recording_sink.hpp"
#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"

struct ring_buffer;  // libbpf

namespace qk::record {

struct EbpfOptions {
    // A power of two, at least a page. 4 MiB: a burst of a million opens from two processes loses
    // nothing even at 1 MiB with both cores busy, and each MiB costs about half a millisecond to
    // allocate, map and free (docs/benchmarks.md).
    std::size_t ring_bytes = 4u << 20;
    bool io_uring = true;  // attach io_uring's tracepoint where the kernel has it (false: act as if not)
    bool debug = false;    // libbpf's messages and each program's size on stderr (QK_DEBUG_BPF)
};

// Which failed calls of a task the programs keep (QK_TASK_* in its `tracked` entry); every other
// failure is dropped in the kernel before any path is walked.
struct TrackOptions {
    bool probes = true;    // opens and execs that failed with ENOENT
    bool denials = false;  // opens and execs refused with EACCES or EPERM
    bool only_denials = false;  // no success: the refusals, and the probes when `probes` asks
    bool lookups = false;  // stat-family calls that found nothing (with probes) or were refused (with denials)
};

// What to tell a user whose kernel release is too old for the recorder's programs; empty otherwise.
std::string ebpf_kernel_hint(std::string_view release);

class EbpfSession {
public:
    static Result<std::unique_ptr<EbpfSession>> open(const EbpfOptions& options);
    ~EbpfSession();
    EbpfSession(const EbpfSession&) = delete;
    EbpfSession& operator=(const EbpfSession&) = delete;

    // Starts routing the records of processes in cgroup `id` (or below it, at `level`) to `sink`.
    Status track(std::uint64_t id, int level, RecordingSink* sink, TrackOptions options = {});
    // Waits until every record submitted so far is delivered, stops tracking `id`, and returns its
    // counters. Call once the cgroup is empty, so that nothing of the task can still be in flight.
    qk_task_stats untrack(std::uint64_t id);

    // Kills the processes of task `id` that live outside its cgroup (they moved themselves out: the
    // recorder follows them by the process tree) and waits for them to exit; returns how many there
    // were. Call once the command has ended and its cgroup is empty, before untrack.
    int kill_followed(std::uint64_t id, std::chrono::milliseconds timeout);

    std::size_t ring_bytes() const { return ring_bytes_; }

private:
    EbpfSession() = default;
    void consume_loop();
    void drain();
    static int on_record(void* ctx, void* data, std::size_t size);

    qk_bpf_object object_{};
    ::ring_buffer* ring_ = nullptr;
    std::size_t ring_bytes_ = 0;
    UniqueFd wake_;   // eventfd: a drain was requested, or the session is stopping
    UniqueFd epoll_;
    std::thread consumer_;

    std::mutex mutex_;  // guards sinks_ and the programs' globals; held while records are delivered
    std::unordered_map<std::uint64_t, RecordingSink*> sinks_;

    std::mutex drain_mutex_;
    std::condition_variable drained_cv_;
    std::uint64_t drain_requested_ = 0;
    std::uint64_t drain_done_ = 0;
    bool stopping_ = false;
};

}  // namespace qk::record
