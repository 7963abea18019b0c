#include "ebpf_session.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "ebpf_decode.hpp"
#include "ebpf_object.h"

namespace qk::record {
namespace {

// libbpf is used for the ring buffer only; its messages are noise unless asked for (EbpfOptions::debug;
// libbpf's printer is process-wide). (The attribute tells -Wformat=2 that the format is libbpf's, checked
// where libbpf writes it.)
std::atomic<bool> libbpf_messages{false};

[[gnu::format(printf, 2, 0)]] int libbpf_log(enum libbpf_print_level level, const char* format, va_list args)
{
    if (level == LIBBPF_DEBUG || !libbpf_messages.load(std::memory_order_relaxed))
        return 0;
    return std::vfprintf(stderr, format, args);
}

Error load_error(const char* what, int err, const char* log)
{
    std::string hint;
    if (err == EPERM || err == EACCES)
        hint = " (loading BPF programs needs root, or CAP_BPF with CAP_PERFMON and CAP_SYS_ADMIN)";
    else if (utsname u{}; ::uname(&u) == 0)
        hint = ebpf_kernel_hint(u.release);
    std::string detail;
    if (log && *log) {
        std::string_view rest(log);
        while (!rest.empty()) {
            auto nl = rest.find('\n');
            auto line = rest.substr(0, nl);
            if (!line.empty())
                detail += fmt::format("\n  verifier: {}", line);
            if (nl == std::string_view::npos)
                break;
            rest.remove_prefix(nl + 1);
        }
    }
    return Error{fmt::format("{}: {}{}{}", what, std::strerror(err), hint, detail), err};
}

bool power_of_two(std::size_t n) { return n && !(n & (n - 1)); }

}  // namespace

std::string ebpf_kernel_hint(std::string_view release)
{
    // "<major>.<minor>", each a number that fits (sscanf would wrap one that does not).
    unsigned major = 0, minor = 0;
    const char* end = release.data() + release.size();
    auto [dot, ec] = std::from_chars(release.data(), end, major);
    if (ec != std::errc() || dot == end || *dot != '.' || std::from_chars(dot + 1, end, minor).ec != std::errc())
        return {};
    if (major > 5 || (major == 5 && minor >= 17))
        return {};
    return fmt::format(" (this kernel is {}.{}; the eBPF recorder needs Linux 5.17 or later, for bpf_loop and "
                       "the kernel's own CO-RE relocation: use --recorder strace here)",
                       major, minor);
}

Result<std::unique_ptr<EbpfSession>> EbpfSession::open(const EbpfOptions& options)
{
    if (options.debug)
        libbpf_messages = true;
    libbpf_set_print(libbpf_log);
    if (!power_of_two(options.ring_bytes) || options.ring_bytes < static_cast<std::size_t>(::getpagesize()) ||
        options.ring_bytes > (1u << 30))
        return error(fmt::format("ring buffer size {} must be a power of two of at least one page and at most 1 GiB",
                                 options.ring_bytes));
    std::unique_ptr<EbpfSession> s(new EbpfSession());
    s->ring_bytes_ = options.ring_bytes;
    const char* stage = nullptr;
    std::string log(16 << 10, '\0');
    if (int err = qk_bpf_object_load(&s->object_, static_cast<qk_u32>(options.ring_bytes), &stage, log.data(),
                                     log.size()))
        return load_error(stage, -err, log.c_str());
    if (options.debug) {
        qk_bpf_object_describe(&s->object_, log.data(), log.size());
        std::fprintf(stderr, "qk: BPF recorder loaded:\n%s", log.c_str());
    }
    if (s->object_.abi_version != QK_ABI_VERSION)
        return error("the loaded BPF recorder reports another ABI version: rebuild qk");
    if (int err = qk_bpf_object_attach(&s->object_, options.io_uring, &stage))
        return load_error(stage, -err, nullptr);
    qk_globals* g = s->object_.globals;
    g->wakeup_bytes = options.ring_bytes / 8;
    g->owner_tgid = static_cast<qk_u32>(::getpid());  // its next thread or child captures qk's root
    // Without the tracepoint a ring's file operations are invisible: then setting up a ring at all is
    // what makes a recording incomplete, as under strace.
    g->io_uring_blind = s->object_.io_uring_attached ? 0 : 1;

    s->ring_ = ring_buffer__new(s->object_.events_fd, on_record, s.get(), nullptr);
    if (!s->ring_)
        return sys_error("cannot map the BPF ring buffer");
    s->wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    s->epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!s->wake_.valid() || !s->epoll_.valid())
        return sys_error("cannot set up the BPF ring buffer consumer");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = 0;
    // Unwatched, the ring would never be read (every recording empty) or a drain never asked for.
    const bool ring_watched = ::epoll_ctl(s->epoll_.get(), EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->ring_), &ev) == 0;
    ev.data.u32 = 1;
    if (!ring_watched || ::epoll_ctl(s->epoll_.get(), EPOLL_CTL_ADD, s->wake_.get(), &ev) != 0)
        return sys_error("cannot watch the BPF ring buffer and its wake-up eventfd (epoll_ctl)");
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
    qk_bpf_object_destroy(&object_);
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

Status EbpfSession::track(std::uint64_t id, int level, RecordingSink* sink, TrackOptions options)
{
    std::lock_guard lock(mutex_);
    qk_task_stats zero{};
    zero.options = (options.probes ? 0 : QK_TASK_NO_PROBES) |
                   (options.denials || options.only_denials ? QK_TASK_DENIALS : 0) |
                   (options.only_denials ? QK_TASK_DENIALS_ONLY : 0) |
                   (options.lookups ? QK_TASK_LOOKUPS : 0);
    if (bpf_map_update_elem(object_.tracked_fd, &id, &zero, BPF_ANY) != 0)
        return sys_error("cannot add the task's cgroup to the BPF recorder");
    sinks_[id] = sink;
    object_.globals->track_level = static_cast<qk_u32>(level);
    object_.globals->ntracked = static_cast<qk_u32>(sinks_.size());
    return {};
}

int EbpfSession::kill_followed(std::uint64_t id, std::chrono::milliseconds timeout)
{
    const int fd = object_.members_fd;
    auto members = [fd, id] {
        std::vector<std::uint32_t> tgids;
        std::uint32_t key = 0, next = 0;
        bool first = true;
        while (bpf_map_get_next_key(fd, first ? nullptr : &key, &next) == 0) {
            first = false;
            key = next;
            std::uint64_t task = 0;
            if (bpf_map_lookup_elem(fd, &next, &task) == 0 && task == id)
                tgids.push_back(next);
        }
        return tgids;
    };
    std::set<std::uint32_t> killed, refused;
    std::vector<UniqueFd> exits;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // Rounds, for a process that forked as it was being killed: its child is a member too.
    for (std::vector<std::uint32_t> left; !(left = members()).empty();) {
        for (std::uint32_t tgid : left) {
            if (killed.contains(tgid) || refused.contains(tgid))
                continue;
            // The pidfd pins the process; still a member once pinned means it is still the same one
            // (the programs remove a process when it exits, before its pid can be reused).
            UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, tgid, 0)));
            std::uint64_t task = 0;
            if (!pidfd.valid() || bpf_map_lookup_elem(fd, &tgid, &task) != 0 || task != id)
                continue;
            // ESRCH: it ended since the lookup. Another refusal is not counted as killed, nor tried again.
            if (::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0) != 0 && errno != ESRCH) {
                refused.insert(tgid);
                continue;
            }
            killed.insert(tgid);
            exits.push_back(std::move(pidfd));
        }
        for (const UniqueFd& pidfd : exits) {
            auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            struct pollfd p {pidfd.get(), POLLIN, 0};
            ::poll(&p, 1, static_cast<int>(std::max<long>(0, left_ms.count())));
        }
        if (std::chrono::steady_clock::now() >= deadline)
            break;
    }
    return static_cast<int>(killed.size());
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
    int fd = object_.tracked_fd;
    bpf_map_lookup_elem(fd, &id, &stats);
    bpf_map_delete_elem(fd, &id);
    sinks_.erase(id);
    object_.globals->ntracked = static_cast<qk_u32>(sinks_.size());
    return stats;
}

}  // namespace qk::record
