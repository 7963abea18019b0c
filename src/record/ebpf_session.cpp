#include "record/ebpf_session.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>

#include <fmt/core.h>

#include "record/ebpf_decode.hpp"
#include "recorder.skel.h"

namespace qk::record {
namespace {

// libbpf's warnings, kept so that a failed load can say why.
std::mutex g_log_mutex;
std::deque<std::string> g_log;

int keep_libbpf_log(enum libbpf_print_level level, const char* format, va_list args)
{
    if (level == LIBBPF_DEBUG)
        return 0;
    char line[512];
    int n = std::vsnprintf(line, sizeof(line), format, args);
    std::lock_guard lock(g_log_mutex);
    g_log.emplace_back(line);
    if (!g_log.empty() && !g_log.back().empty() && g_log.back().back() == '\n')
        g_log.back().pop_back();
    if (g_log.size() > 8)
        g_log.pop_front();
    if (std::getenv("QK_DEBUG_BPF"))
        std::fputs(line, stderr);
    return n;
}

Error load_error(const std::string& what, int err)
{
    std::string log;
    {
        std::lock_guard lock(g_log_mutex);
        for (const auto& l : g_log)
            log += "\n  libbpf: " + l;
        g_log.clear();
    }
    std::string hint;
    if (err == EPERM || err == EACCES)
        hint = " (loading BPF programs needs root, or CAP_BPF with CAP_PERFMON)";
    return Error{fmt::format("{}: {}{}{}", what, std::strerror(err), hint, log), err};
}

bool power_of_two(std::size_t n) { return n && !(n & (n - 1)); }

}  // namespace

Result<std::unique_ptr<EbpfSession>> EbpfSession::open(const EbpfOptions& options)
{
    libbpf_set_print(keep_libbpf_log);
    if (!power_of_two(options.ring_bytes) || options.ring_bytes < static_cast<std::size_t>(::getpagesize()))
        return error(fmt::format("ring buffer size {} must be a power of two of at least one page",
                                 options.ring_bytes));
    std::unique_ptr<EbpfSession> s(new EbpfSession());
    s->ring_bytes_ = options.ring_bytes;
    // io_uring's tracepoint exists only where io_uring is built in. Asking the kernel's BTF first would
    // parse all of it once more (tens of milliseconds), so try with it, and without only on failure.
    int err = 0;
    for (bool io_uring : {true, false}) {
        if (s->skel_)
            recorder__destroy(s->skel_);
        s->skel_ = recorder__open();
        if (!s->skel_)
            return load_error("cannot open the BPF recorder", errno);
        bpf_map__set_max_entries(s->skel_->maps.events, static_cast<__u32>(options.ring_bytes));
        bpf_program__set_autoload(s->skel_->progs.qk_io_uring_submit, io_uring);
        err = recorder__load(s->skel_);
        if (err == 0 || err == -EPERM || err == -EACCES)
            break;
    }
    if (err)
        return load_error("cannot load the BPF recorder", -err);
    if (s->skel_->rodata->qk_abi_version != QK_ABI_VERSION)
        return error("the loaded BPF recorder reports another ABI version: rebuild qk");
    if (int err = recorder__attach(s->skel_))
        return load_error("cannot attach the BPF recorder", -err);
    s->skel_->bss->qk_wakeup_bytes = options.ring_bytes / 8;

    s->ring_ = ring_buffer__new(bpf_map__fd(s->skel_->maps.events), on_record, s.get(), nullptr);
    if (!s->ring_)
        return load_error("cannot map the BPF ring buffer", errno);
    s->wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    s->epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!s->wake_.valid() || !s->epoll_.valid())
        return sys_error("cannot set up the BPF ring buffer consumer");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = 0;
    ::epoll_ctl(s->epoll_.get(), EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->ring_), &ev);
    ev.data.u32 = 1;
    ::epoll_ctl(s->epoll_.get(), EPOLL_CTL_ADD, s->wake_.get(), &ev);
    s->consumer_ = std::thread([p = s.get()] { p->consume_loop(); });
    return s;
}

EbpfSession::~EbpfSession()
{
    if (consumer_.joinable()) {
        {
            std::lock_guard lock(drain_mutex_);
            stopping_ = true;
        }
        std::uint64_t one = 1;
        (void)!::write(wake_.get(), &one, sizeof(one));
        consumer_.join();
    }
    if (ring_)
        ring_buffer__free(ring_);
    if (skel_)
        recorder__destroy(skel_);
}

int EbpfSession::on_record(void* ctx, void* data, std::size_t size)
{
    auto* self = static_cast<EbpfSession*>(ctx);
    auto rec = decode_ebpf_record(data, size);
    if (!rec) {
        // Attribute it if the header can be read: that task's recording cannot be trusted.
        qk_event_header h{};
        if (size >= sizeof(h)) {
            std::memcpy(&h, data, sizeof(h));
            auto it = self->sinks_.find(h.cgroup_id);
            if (it != self->sinks_.end())
                it->second->mark_incomplete(rec.error().message);
        }
        return 0;
    }
    auto it = self->sinks_.find(rec->cgroup_id);
    if (it != self->sinks_.end())
        deliver(*rec, *it->second);
    return 0;
}

void EbpfSession::drain()
{
    std::lock_guard lock(mutex_);
    ring_buffer__consume(ring_);
}

void EbpfSession::consume_loop()
{
    // Records are submitted without a wakeup until the ring is an eighth full; the timeout bounds how
    // long a trickle waits. A task's end is learned from the task (untrack), not from this loop.
    constexpr int kTimerMs = 50;
    epoll_event events[2];
    for (;;) {
        int n = ::epoll_wait(epoll_.get(), events, 2, kTimerMs);
        std::uint64_t requested;
        bool stop;
        {
            std::lock_guard lock(drain_mutex_);
            requested = drain_requested_;
            stop = stopping_;
        }
        for (int i = 0; i < n; i++)
            if (events[i].data.u32 == 1) {
                std::uint64_t v;
                (void)!::read(wake_.get(), &v, sizeof(v));
            }
        drain();
        {
            std::lock_guard lock(drain_mutex_);
            drain_done_ = requested;
        }
        drained_cv_.notify_all();
        if (stop)
            return;
    }
}

Status EbpfSession::track(std::uint64_t id, int level, RecordingSink* sink, bool probes)
{
    std::lock_guard lock(mutex_);
    qk_task_stats zero{};
    zero.options = probes ? 0 : QK_TASK_NO_PROBES;
    if (bpf_map_update_elem(bpf_map__fd(skel_->maps.tracked), &id, &zero, BPF_ANY) != 0)
        return sys_error("cannot add the task's cgroup to the BPF recorder");
    sinks_[id] = sink;
    skel_->bss->qk_track_level = static_cast<__u32>(level);
    skel_->bss->qk_ntracked = static_cast<__u32>(sinks_.size());
    return {};
}

qk_task_stats EbpfSession::untrack(std::uint64_t id)
{
    {
        std::unique_lock lock(drain_mutex_);
        std::uint64_t ticket = ++drain_requested_;
        std::uint64_t one = 1;
        (void)!::write(wake_.get(), &one, sizeof(one));
        drained_cv_.wait(lock, [&] { return drain_done_ >= ticket; });
    }
    std::lock_guard lock(mutex_);
    qk_task_stats stats{};
    int fd = bpf_map__fd(skel_->maps.tracked);
    bpf_map_lookup_elem(fd, &id, &stats);
    bpf_map_delete_elem(fd, &id);
    sinks_.erase(id);
    skel_->bss->qk_ntracked = static_cast<__u32>(sinks_.size());
    return stats;
}

}  // namespace qk::record
