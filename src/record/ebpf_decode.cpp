#include "ebpf_decode.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstring>
#include <string_view>

#include <fmt/core.h>

#include "events.h"

namespace qk::record {

// The layout both compilers must agree on; a change here needs QK_ABI_VERSION bumped.
static_assert(QK_ABI_VERSION == 11);
static_assert(sizeof(qk_event_header) == 24);
static_assert(offsetof(qk_event_header, cgroup_id) == 8);
static_assert(sizeof(qk_pieces) == 12 + QK_DATA_SIZE);
static_assert(offsetof(qk_pieces, data) == 12);
static_assert(offsetof(qk_file_event, p) == 40);
static_assert(offsetof(qk_exec_event, p) == 32);
static_assert(sizeof(qk_fork_event) == 32);
static_assert(sizeof(qk_exit_event) == 32);
static_assert(offsetof(qk_net_event, addr) == 48 && offsetof(qk_net_event, payload) == 64 &&
              sizeof(qk_net_event) == 64 + QK_NET_PAYLOAD);
static_assert(sizeof(qk_task_stats) == 64 && offsetof(qk_task_stats, options) == 40 &&
              offsetof(qk_task_stats, io_uring_refused) == 56);
static_assert((QK_TASK_NO_PROBES & QK_TASK_DENIALS) == 0 && ((QK_TASK_NO_PROBES | QK_TASK_DENIALS) & QK_TASK_DENIALS_ONLY) == 0);
static_assert(sizeof(qk_globals) == 40 && offsetof(qk_globals, wakeup_bytes) == 8 &&
              offsetof(qk_globals, root_dentry) == 24);

namespace {

struct Pieces {
    std::string_view text[QK_MAX_PIECES];
    bool truncated[QK_MAX_PIECES] = {};
    unsigned count = 0;
};

// The pieces of a record whose fixed part ends at `fixed`; false when lengths overrun the record.
bool read_pieces(const qk_pieces* p, const char* record, std::size_t size, Pieces& out)
{
    const char* data = reinterpret_cast<const char*>(p) + offsetof(qk_pieces, data);
    std::size_t avail = size - static_cast<std::size_t>(data - record);
    std::size_t off = 0;
    out.count = p->count > QK_MAX_PIECES ? QK_MAX_PIECES : p->count;
    for (unsigned i = 0; i < out.count; i++) {
        std::size_t len = p->len[i];
        if (off + len > avail)
            return false;
        out.text[i] = std::string_view(data + off, len);
        out.truncated[i] = p->truncated & (1u << i);
        off += len;
    }
    return true;
}

// The x86_64 syscalls a REMAP names (bpf/recorder.bpf.c).
const char* remap_call_name(std::uint32_t nr)
{
    switch (nr) {
    case 155: return "pivot_root";
    case 165: return "mount";
    case 308: return "setns";
    case 428: return "open_tree";
    case 429: return "move_mount";
    case 432: return "fsmount";
    default: return "a mount-related call";
    }
}

PathArg arg(const Pieces& p, unsigned base, unsigned name)
{
    return PathArg{std::string(p.text[base]), std::string(p.text[name]), p.truncated[base] || p.truncated[name]};
}

Result<FsOp> decode_file(const qk_file_event& ev, const Pieces& p)
{
    FsOp op;
    op.pid = static_cast<pid_t>(ev.h.pid);
    op.result = ev.ret;
    op.flags = ev.flags;
    auto need = [&](unsigned n) { return p.count >= n; };
    switch (ev.op) {
    case QK_OP_OPEN:
        if (!need(3))
            break;
        op.kind = FsOpKind::open;
        op.resolved = std::string(p.text[0]);
        op.resolved_truncated = p.truncated[0];
        op.a = arg(p, 1, 2);
        op.created = ev.info & QK_INFO_CREATED;
        op.created_known = true;
        op.directory = ev.info & QK_INFO_DIRECTORY;
        return op;
    case QK_OP_OPEN_HANDLE:
        if (!need(1))
            break;
        op.kind = FsOpKind::open;
        op.resolved = std::string(p.text[0]);
        op.resolved_truncated = p.truncated[0];
        op.created_known = true;
        op.directory = ev.info & QK_INFO_DIRECTORY;
        return op;
    case QK_OP_REMAP:
        op.kind = FsOpKind::remap;
        op.call = remap_call_name(ev.flags);
        return op;
    case QK_OP_RENAME:
    case QK_OP_LINK:
        if (!need(4))
            break;
        op.kind = ev.op == QK_OP_RENAME ? FsOpKind::rename : FsOpKind::link;
        op.a = arg(p, 0, 1);
        op.b = arg(p, 2, 3);
        return op;
    case QK_OP_UNLINK: op.kind = FsOpKind::unlink; break;
    case QK_OP_RMDIR: op.kind = FsOpKind::rmdir; break;
    case QK_OP_MKDIR: op.kind = FsOpKind::mkdir; break;
    case QK_OP_SYMLINK: op.kind = FsOpKind::symlink; break;
    case QK_OP_MKNOD: op.kind = FsOpKind::mknod; break;
    case QK_OP_TRUNCATE: op.kind = FsOpKind::truncate; break;
    case QK_OP_EXEC: op.kind = FsOpKind::exec; break;
    case QK_OP_LOOK: op.kind = FsOpKind::look; break;
    case QK_OP_FTRUNCATE:
    case QK_OP_CHDIR:
    case QK_OP_FCHDIR:
        if (!need(1))
            break;
        op.kind = ev.op == QK_OP_FTRUNCATE ? FsOpKind::truncate : FsOpKind::chdir;
        op.resolved = std::string(p.text[0]);
        op.resolved_truncated = p.truncated[0];
        return op;
    default:
        return error(fmt::format("eBPF record: unknown file operation {}", ev.op));
    }
    if (!need(2))
        return error(fmt::format("eBPF record: operation {} has {} pieces", ev.op, p.count));
    op.a = arg(p, 0, 1);
    return op;
}

ProcExec decode_exec(const qk_exec_event& ev, const Pieces& p)
{
    ProcExec exec;
    exec.pid = static_cast<pid_t>(ev.h.pid);
    exec.ppid = static_cast<pid_t>(ev.ppid);
    exec.elf32 = ev.info & QK_INFO_ELF32;
    std::string_view filename = p.count > 0 ? p.text[0] : "";
    // fexecve and execveat(fd, "") name the file "/dev/fd/N": only the kernel's own path means anything.
    if (filename.starts_with("/dev/fd/") && p.count > 3)
        exec.resolved = std::string(p.text[3]);
    else if (p.count > 1)
        exec.file = arg(p, 1, 0);
    if (p.count > 2) {
        std::string_view args = p.text[2];
        while (!args.empty()) {
            auto nul = args.find('\0');
            exec.argv.emplace_back(args.substr(0, nul));
            if (nul == std::string_view::npos)
                break;
            args.remove_prefix(nul + 1);
        }
    }
    return exec;
}


Result<NetOp> decode_net(const char* bytes, std::size_t size)
{
    qk_net_event ev;
    std::memcpy(&ev, bytes, offsetof(qk_net_event, payload));
    if (ev.payload_len > QK_NET_PAYLOAD || offsetof(qk_net_event, payload) + ev.payload_len > size)
        return error(fmt::format("eBPF network record of {} bytes says it holds {} of payload", size, ev.payload_len));
    NetOp op;
    switch (ev.op) {
    case QK_NET_CONNECT: op.kind = NetOpKind::connect; break;
    case QK_NET_SEND: op.kind = NetOpKind::send; break;
    case QK_NET_RECV: op.kind = NetOpKind::recv; break;
    default: return error(fmt::format("eBPF record: unknown network operation {}", ev.op));
    }
    op.pid = static_cast<pid_t>(ev.h.pid);
    op.result = ev.ret;
    op.fd = ev.fd;
    op.datagram = ev.sock_type == SOCK_DGRAM;
    op.port = ev.port;
    if (ev.family == AF_INET || ev.family == AF_INET6) {
        char text[INET6_ADDRSTRLEN] = {};
        if (inet_ntop(ev.family, ev.addr, text, sizeof(text)))
            op.address = text;
    }
    op.payload.assign(bytes + offsetof(qk_net_event, payload), ev.payload_len);
    return op;
}

}  // namespace

Result<EbpfRecord> decode_ebpf_record(const void* data, std::size_t size)
{
    qk_event_header h;
    if (size < sizeof(h))
        return error(fmt::format("eBPF record of {} bytes is shorter than its header", size));
    std::memcpy(&h, data, sizeof(h));
    if (h.abi != QK_ABI_VERSION)
        return error(fmt::format("eBPF record of ABI version {}, expected {}: rebuild qk", h.abi, QK_ABI_VERSION));
    const char* bytes = static_cast<const char*>(data);
    EbpfRecord rec;
    rec.cgroup_id = h.cgroup_id;
    switch (h.kind) {
    case QK_EV_FILE: {
        if (size < offsetof(qk_file_event, p.data))
            break;
        // The record is shorter than the struct (only used bytes are sent): read it in place.
        const auto& ev = *reinterpret_cast<const qk_file_event*>(bytes);
        Pieces p;
        if (!read_pieces(&ev.p, bytes, size, p))
            break;
        QK_TRY(op, decode_file(ev, p));
        rec.event = std::move(op).value();
        return rec;
    }
    case QK_EV_EXEC: {
        if (size < offsetof(qk_exec_event, p.data))
            break;
        const auto& ev = *reinterpret_cast<const qk_exec_event*>(bytes);
        Pieces p;
        if (!read_pieces(&ev.p, bytes, size, p))
            break;
        rec.event = decode_exec(ev, p);
        return rec;
    }
    case QK_EV_FORK: {
        if (size < sizeof(qk_fork_event))
            break;
        qk_fork_event ev;
        std::memcpy(&ev, data, sizeof(ev));
        rec.event = ProcFork{static_cast<pid_t>(ev.h.pid), static_cast<pid_t>(ev.child_pid)};
        return rec;
    }
    case QK_EV_EXIT: {
        if (size < sizeof(qk_exit_event))
            break;
        qk_exit_event ev;
        std::memcpy(&ev, data, sizeof(ev));
        rec.event = ProcExit{static_cast<pid_t>(ev.h.pid), ev.status};
        return rec;
    }
    case QK_EV_NET: {
        if (size < offsetof(qk_net_event, payload))
            break;
        QK_TRY(op, decode_net(bytes, size));
        rec.event = std::move(op).value();
        return rec;
    }
    default:
        return error(fmt::format("eBPF record of unknown kind {}", h.kind));
    }
    return error(fmt::format("eBPF record of kind {} is malformed ({} bytes)", h.kind, size));
}

void deliver(const EbpfRecord& record, RecordingSink& sink)
{
    std::visit(
        [&sink](const auto& ev) {
            using T = std::decay_t<decltype(ev)>;
            if constexpr (std::is_same_v<T, FsOp>)
                sink.on_fs(ev);
            else if constexpr (std::is_same_v<T, ProcFork>)
                sink.on_fork(ev);
            else if constexpr (std::is_same_v<T, ProcExec>)
                sink.on_exec(ev);
            else if constexpr (std::is_same_v<T, NetOp>)
                sink.on_net(ev);
            else
                sink.on_exit(ev);
        },
        record.event);
}

}  // namespace qk::record
