// SPDX-License-Identifier: GPL-2.0
/* The recorder's programs: one dispatcher on the raw sys_exit tracepoint for the file syscalls (their
 * arguments are still in pt_regs and their results are known; unlike per-syscall tracepoints it also
 * fires for 32-bit syscalls, which we must notice), the scheduler tracepoints for process lifecycle,
 * and io_uring submissions. Everything is filtered by task first: its cgroup, or the process tree
 * followed from fork (maps.h). x86_64 syscall numbers.
 *
 * Loaded by a light skeleton (bpftool gen skeleton -L): the kernel relocates the CO-RE accesses
 * against its own BTF, so userspace never parses vmlinux BTF (that was most of a load's time). Only
 * sys_exit is a BTF-typed tracepoint (its pt_regs and task reads are plain loads, on every syscall);
 * the others read through helpers anyway, and a raw tracepoint spares the load a search of the
 * kernel's BTF for its attach point. */
#include "vmlinux_min.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "maps.h"

#include "paths.h"

char LICENSE[] SEC("license") = "GPL";

enum {
    NR_open = 2, NR_truncate = 76, NR_ftruncate = 77, NR_chdir = 80, NR_fchdir = 81, NR_rename = 82,
    NR_mkdir = 83, NR_rmdir = 84, NR_creat = 85, NR_link = 86, NR_unlink = 87, NR_symlink = 88,
    NR_execve = 59, NR_openat = 257, NR_mkdirat = 258, NR_unlinkat = 263, NR_renameat = 264,
    NR_linkat = 265, NR_symlinkat = 266, NR_renameat2 = 316, NR_execveat = 322, NR_io_uring_setup = 425,
    NR_openat2 = 437, NR_open_by_handle_at = 304, NR_mknod = 133, NR_mknodat = 259, NR_mount = 165,
    NR_pivot_root = 155, NR_setns = 308, NR_open_tree = 428, NR_move_mount = 429, NR_fsmount = 432,
    NR_stat = 4, NR_lstat = 6, NR_access = 21, NR_newfstatat = 262, NR_faccessat = 269, NR_statx = 332,
    NR_faccessat2 = 439, NR_connect = 42, NR_sendto = 44, NR_recvfrom = 45, NR_sendmsg = 46, NR_recvmsg = 47,
    NR_sendmmsg = 307,
};

#define TS_COMPAT 0x0002
#define X32_SYSCALL_BIT 0x40000000
#define FMODE_CREATED 0x100000
#define S_IFMT 00170000
#define S_IFDIR 0040000
#define AT_REMOVEDIR 0x200
#define O_CREAT 0100
#define O_WRONLY 01
#define O_TRUNC 01000
#define EPERM 1
#define ENOENT 2
#define EACCES 13
#define EINTR 4
#define EAGAIN 11
#define ENOBUFS 105
#define EROFS 30
#define EOVERFLOW 75
#define EXDEV 18
#define ENOSYS 38
#define PF_KTHREAD 0x00200000
#define CLONE_NEWNS 0x00020000
#define MS_REMOUNT 32
#define MS_BIND 4096
#define MS_PROPAGATION ((1 << 17) | (1 << 18) | (1 << 19) | (1 << 20)) /* unbindable private slave shared */
#define OPEN_TREE_CLONE 1
#define S_IFSOCK 0140000
#define SOCK_DGRAM 2
#define AF_INET 2
#define AF_INET6 10

/* What to record for a syscall: decided in one switch, before any text is gathered, so that the
 * syscall number is dead by the time the shared tail runs and the verifier walks that tail once. */
struct plan {
    __u32 op;           /* enum qk_op; 0: not a syscall we record */
    __u32 flags;        /* open flags, rename flags or the *at flags, as passed */
    long fd;            /* >= 0: piece 0 is this fd's path (the opened file, ftruncate's file) */
    int cwd;            /* piece 0 is the cwd after the call (chdir, fchdir) */
    int nat;            /* how many (dirfd, name) pairs follow */
    long dirfd[2];
    const char *name[2];
    const void *open_how; /* openat2's struct open_how, whose flags are read once the task is known */
};

static __always_inline void plan_for(long nr, struct pt_regs *regs, struct plan *p)
{
    long a0 = regs->di, a1 = regs->si, a2 = regs->dx, a3 = regs->r10, a4 = regs->r8;
    switch (nr) {
    case NR_open: p->op = QK_OP_OPEN; p->flags = a1; p->name[0] = (void *)a0; break;
    case NR_creat: p->op = QK_OP_OPEN; p->flags = O_CREAT | O_WRONLY | O_TRUNC; p->name[0] = (void *)a0; break;
    case NR_openat: p->op = QK_OP_OPEN; p->flags = a2; p->dirfd[0] = a0; p->name[0] = (void *)a1; break;
    case NR_openat2: p->op = QK_OP_OPEN; p->open_how = (void *)a2; p->dirfd[0] = a0; p->name[0] = (void *)a1; break;
    case NR_rename: p->op = QK_OP_RENAME; p->nat = 2; p->name[0] = (void *)a0; p->name[1] = (void *)a1; break;
    case NR_renameat:
    case NR_renameat2:
        p->op = QK_OP_RENAME; p->flags = nr == NR_renameat2 ? a4 : 0; p->nat = 2;
        p->dirfd[0] = a0; p->name[0] = (void *)a1; p->dirfd[1] = a2; p->name[1] = (void *)a3;
        break;
    case NR_link: p->op = QK_OP_LINK; p->nat = 2; p->name[0] = (void *)a0; p->name[1] = (void *)a1; break;
    case NR_linkat:
        p->op = QK_OP_LINK; p->flags = a4; p->nat = 2;
        p->dirfd[0] = a0; p->name[0] = (void *)a1; p->dirfd[1] = a2; p->name[1] = (void *)a3;
        break;
    case NR_unlink: p->op = QK_OP_UNLINK; p->name[0] = (void *)a0; break;
    case NR_unlinkat:
        p->op = (a2 & AT_REMOVEDIR) ? QK_OP_RMDIR : QK_OP_UNLINK; p->flags = a2;
        p->dirfd[0] = a0; p->name[0] = (void *)a1;
        break;
    case NR_rmdir: p->op = QK_OP_RMDIR; p->name[0] = (void *)a0; break;
    case NR_mkdir: p->op = QK_OP_MKDIR; p->name[0] = (void *)a0; break;
    case NR_mkdirat: p->op = QK_OP_MKDIR; p->dirfd[0] = a0; p->name[0] = (void *)a1; break;
    case NR_symlink: p->op = QK_OP_SYMLINK; p->name[0] = (void *)a1; break;
    case NR_symlinkat: p->op = QK_OP_SYMLINK; p->dirfd[0] = a1; p->name[0] = (void *)a2; break;
    case NR_truncate: p->op = QK_OP_TRUNCATE; p->name[0] = (void *)a0; break;
    case NR_ftruncate: p->op = QK_OP_FTRUNCATE; p->fd = a0; p->nat = 0; break;
    case NR_chdir: p->op = QK_OP_CHDIR; p->cwd = 1; p->nat = 0; break;
    case NR_fchdir: p->op = QK_OP_FCHDIR; p->cwd = 1; p->nat = 0; break;
    case NR_execve: p->op = QK_OP_EXEC; p->name[0] = (void *)a0; break;
    case NR_execveat: p->op = QK_OP_EXEC; p->flags = a4; p->dirfd[0] = a0; p->name[0] = (void *)a1; break;
    case NR_open_by_handle_at: p->op = QK_OP_OPEN_HANDLE; p->flags = a2; p->nat = 0; break;
    case NR_stat:
    case NR_lstat:
    case NR_access: p->op = QK_OP_LOOK; p->name[0] = (void *)a0; break;
    case NR_newfstatat:
    case NR_statx:
    case NR_faccessat:
    case NR_faccessat2: p->op = QK_OP_LOOK; p->dirfd[0] = a0; p->name[0] = (void *)a1; break;
    case NR_mknod: p->op = QK_OP_MKNOD; p->flags = a1; p->name[0] = (void *)a0; break;
    case NR_mknodat: p->op = QK_OP_MKNOD; p->flags = a2; p->dirfd[0] = a0; p->name[0] = (void *)a1; break;
    /* What makes later paths name aliases: a new mount, a new root, another namespace's tree, a mount
     * detached from any tree (usable as a dirfd). A copy of the tree (unshare -m) alone changes no path. */
    case NR_mount:
        /* as the kernel reads the flags: a remount, or a mere propagation change, moves no path */
        if (!(a3 & MS_REMOUNT) && ((a3 & MS_BIND) || !(a3 & MS_PROPAGATION))) {
            p->op = QK_OP_REMAP; p->flags = nr; p->nat = 0;
        }
        break;
    case NR_pivot_root:
    case NR_move_mount:
    case NR_fsmount:
        p->op = QK_OP_REMAP; p->flags = nr; p->nat = 0;
        break;
    case NR_setns:
        if (a1 == 0 || (a1 & CLONE_NEWNS)) {
            p->op = QK_OP_REMAP; p->flags = nr; p->nat = 0;
        }
        break;
    case NR_open_tree:
        if (a2 & OPEN_TREE_CLONE) {
            p->op = QK_OP_REMAP; p->flags = nr; p->nat = 0;
        }
        break;
    }
}

/* A name as passed, zero-padded: hashed a word at a time. Longer names are always sent. */
#define QK_PROBE_NAME 256
struct probe_name {
    __u64 w[QK_PROBE_NAME / 8];
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct probe_name);
    __uint(max_entries, 1);
} probe_name_buf SEC(".maps");

/* Whether this probe (op on the name relative to dirfd) was already sent for its task; remembers it if
 * not. Keyed by the directory the kernel resolved the name from (cwd, dirfd or the task's root), so the
 * same name from another directory is another probe; no path is walked for a probe already sent. */
__noinline int qk_probe_sent(__u64 cgroup_id, long dirfd, __u64 ustr, __u32 op)
{
    __u32 zero = 0;
    struct probe_name *b = bpf_map_lookup_elem(&probe_name_buf, &zero);
    if (!b)
        return 0;
#pragma unroll
    for (int i = 0; i < QK_PROBE_NAME / 8; i++)
        b->w[i] = 0;
    long n = bpf_probe_read_user_str(b->w, sizeof(b->w), (const char *)ustr);
    if (n <= 0 || n >= QK_PROBE_NAME)
        return 0;
    const char *c = (const char *)b->w;
    /* /proc/self/fd/N names another file whenever N is reused */
    if (c[0] == '/' && c[1] == 'p' && c[2] == 'r' && c[3] == 'o' && c[4] == 'c' && c[5] == '/')
        return 0;
    struct probe_key key = {.cgroup_id = cgroup_id};
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    if (c[0] == '/') {
        key.dir_dentry = (__u64)BPF_CORE_READ(task, fs, root.dentry);
        key.dir_mnt = (__u64)BPF_CORE_READ(task, fs, root.mnt);
    } else if ((int)dirfd == QK_AT_FDCWD) {
        key.dir_dentry = (__u64)BPF_CORE_READ(task, fs, pwd.dentry);
        key.dir_mnt = (__u64)BPF_CORE_READ(task, fs, pwd.mnt);
    } else {
        struct file *f = fd_file(dirfd);
        if (!f)
            return 0;
        key.dir_dentry = (__u64)BPF_CORE_READ(f, f_path.dentry);
        key.dir_mnt = (__u64)BPF_CORE_READ(f, f_path.mnt);
    }
    __u64 h = 0xcbf29ce484222325ULL ^ op;
#pragma unroll
    for (int i = 0; i < QK_PROBE_NAME / 8; i++) {
        h ^= b->w[i];
        h *= 0x9e3779b97f4a7c15ULL;
        h ^= h >> 29;
    }
    key.name_hash = h;
    if (bpf_map_lookup_elem(&probes_sent, &key))
        return 1;
    __u8 one = 1;
    bpf_map_update_elem(&probes_sent, &key, &one, BPF_ANY);
    return 0;
}

/* Records the syscall a plan describes, if its task is traced. A global function, so the verifier
 * checks it once for any plan, not once for each syscall's branch of the dispatcher. */
__noinline int qk_record_plan(struct plan *p, long ret)
{
    if (!p || !p->op)
        return 0;
    /* Failures are noise except, for opens and execs, a lookup that found nothing (a probe; a PATH
     * search probes each directory) and a refusal (EACCES, EPERM: what a confinement denied; EROFS: a
     * write into what enforce binds read-only, qk's cache); for links, EXDEV too (Landlock refusing a link
     * across its rules: the source is a read refused, userspace judges whether it was the task's to read). */
    if (ret < 0 && ret != -ENOENT && ret != -EACCES && ret != -EPERM && ret != -EROFS && ret != -EOVERFLOW &&
        !(ret == -EXDEV && p->op == QK_OP_LINK))
        return 0;
    /* A change refused (EACCES, EPERM, EROFS) names what a confinement kept from being written; one that
     * found nothing changed nothing. What a look found, or was refused, reads nothing. */
    int looks = p->op == QK_OP_OPEN || p->op == QK_OP_EXEC || p->op == QK_OP_LOOK;
    if (ret == -ENOENT && !looks)
        return 0;
    if (p->op == QK_OP_LOOK && ret != -ENOENT && ret != -EACCES)
        return 0;
    /* EOVERFLOW refuses a change only where the overlay cannot copy up a read mask's stand-in (its owner is
     * an id the namespace does not map): a rename or link of a file the task may not read. */
    if (ret == -EOVERFLOW && looks)
        return 0;
    if (ret < 0 && (p->op == QK_OP_REMAP || p->op == QK_OP_CHDIR || p->op == QK_OP_FCHDIR ||
                    p->op == QK_OP_FTRUNCATE || p->op == QK_OP_OPEN_HANDLE))
        return 0;
    __u64 cg;
    struct qk_task_stats *stats = tracked_task(&cg);
    if (!stats)
        return 0;
    /* Whether the task wants this failure (or, asking only for refusals, this success), decided before
     * any path is walked or copied: that is the whole saving. */
    if (ret < 0 && (ret == -ENOENT ? (stats->options & QK_TASK_NO_PROBES) : !(stats->options & QK_TASK_DENIALS)))
        return 0;
    if (ret >= 0 && (stats->options & QK_TASK_DENIALS_ONLY))
        return 0;
    if (p->op == QK_OP_LOOK && !(stats->options & QK_TASK_LOOKUPS))
        return 0;
    /* A task that wants only its refusals needs each probe once (maps.h, probes_sent). Not a recording
     * for the cache, whose keys hold what was absent: a directory's dentry can be freed and its address
     * reused, and a probe wrongly taken for one already sent must never cost a key its absence. */
    if (ret == -ENOENT && (stats->options & QK_TASK_DENIALS_ONLY) && p->nat == 1 &&
        qk_probe_sent(cg, p->dirfd[0], (__u64)p->name[0], p->op))
        return 0;
    struct qk_file_event *ev = scratch();
    if (!ev)
        return 0;
    fill_header(&ev->h, QK_EV_FILE, cg);
    ev->ret = ret;
    ev->info = 0;
    ev->op = p->op;
    ev->flags = p->flags;
    if (p->open_how) {
        __u64 how_flags = 0;
        bpf_probe_read_user(&how_flags, sizeof(how_flags), p->open_how);
        ev->flags = how_flags;
    }
    int opens = p->op == QK_OP_OPEN || p->op == QK_OP_OPEN_HANDLE;
    long fd = opens && ret >= 0 ? ret : p->fd;
    struct qk_pieces *pc = &ev->p;
    pc->count = 0;
    pc->used = 0;
    pc->truncated = 0;
    if (p->cwd) {
        qk_put_cwd(pc);
    } else if (fd >= 0) {
        qk_put_fd(pc, fd);
        struct file *f = fd_file(fd);
        if (f && opens) {
            if (BPF_CORE_READ(f, f_mode) & FMODE_CREATED)
                ev->info |= QK_INFO_CREATED;
            if ((BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) == S_IFDIR)
                ev->info |= QK_INFO_DIRECTORY;
        }
    } else if (p->op == QK_OP_OPEN) {
        qk_empty_piece(pc);
    }
    if (p->nat > 0)
        qk_put_at_path(pc, p->dirfd[0], (__u64)p->name[0]);
    if (p->nat > 1)
        qk_put_at_path(pc, p->dirfd[1], (__u64)p->name[1]);
    submit(ev, offsetof(struct qk_file_event, p.data) + (pc->used & QK_OFF_MASK), stats);
    return 0;
}

/* The user's struct msghdr and iovec (x86_64 layouts: ABI). */
struct user_msghdr {
    void *msg_name;
    int msg_namelen;
    void *msg_iov;
    __u64 msg_iovlen;
};
struct user_iovec {
    void *base;
    __u64 len;
};

/* Where a datagram call's address and first buffer are: sendto/recvfrom pass them, sendmsg/recvmsg (and
 * sendmmsg's first message, whose header leads its mmsghdr) in a msghdr. */
static __always_inline void datagram_of(long nr, long a1, long a4, long ret, const void **addr, const void **buf,
                                        long *len)
{
    if (nr == NR_sendto || nr == NR_recvfrom) {
        *addr = (const void *)a4;
        *buf = (const void *)a1;
        *len = ret;
        return;
    }
    struct user_msghdr m = {};
    struct user_iovec iov = {};
    if (bpf_probe_read_user(&m, sizeof(m), (const void *)a1) != 0 || !m.msg_iov || !m.msg_iovlen)
        return;
    bpf_probe_read_user(&iov, sizeof(iov), m.msg_iov);
    *addr = m.msg_name;
    *buf = iov.base;
    *len = nr == NR_sendmmsg || (long)iov.len < ret ? (long)iov.len : ret;
}

/* Records a connect of an AF_INET or AF_INET6 socket, or a datagram a SOCK_DGRAM one sent or received
 * (events.h, enum qk_net_op): what a task reached, and the DNS it asked and was answered. A global
 * function, checked once. A stream socket's send or receive returns before anything is read. */
__noinline int qk_record_net(long nr, long fd, long a1, long a4, long ret)
{
    int connecting = nr == NR_connect;
    int receiving = nr == NR_recvfrom || nr == NR_recvmsg;
    /* A send that failed is kept, with its error: under a declared network it is what the task was
     * refused (no route); a receive that got nothing says nothing. A send that would block or was
     * interrupted is tried again by its sender and refuses nothing: a busy loop of them must not fill the
     * ring. */
    if (receiving && ret <= 0)
        return 0;
    if (!connecting && (ret == -EAGAIN || ret == -EINTR || ret == -ENOBUFS))
        return 0;
    __u64 cg;
    struct qk_task_stats *stats = tracked_task(&cg);
    if (!stats)
        return 0;
    struct file *f = fd_file(fd);
    if (!f || (BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) != S_IFSOCK)
        return 0;
    struct socket *sock = BPF_CORE_READ(f, private_data);
    short type = BPF_CORE_READ(sock, type);
    if (!connecting && type != SOCK_DGRAM)
        return 0;
    const void *uaddr = 0, *ubuf = 0;
    long len = 0;
    if (connecting)
        uaddr = (const void *)a1;
    else
        datagram_of(nr, a1, a4, ret, &uaddr, &ubuf, &len);
    /* sockaddr_in6: family, port (big-endian), flowinfo, address; sockaddr_in: family, port, address */
    __u8 sa[24] = {};
    __u16 family = 0, port = 0;
    if (uaddr && bpf_probe_read_user(sa, sizeof(sa), uaddr) == 0) {
        family = sa[0] | (sa[1] << 8);
        port = (sa[2] << 8) | sa[3];
    }
    if (family != AF_INET && family != AF_INET6 && (connecting || family != 0))
        return 0; /* a unix socket's address, or none for a connect */
    struct qk_net_event *ev = scratch();
    if (!ev)
        return 0;
    fill_header(&ev->h, QK_EV_NET, cg);
    ev->op = connecting ? QK_NET_CONNECT : receiving ? QK_NET_RECV : QK_NET_SEND;
    ev->ret = ret;
    ev->fd = fd;
    ev->sock_type = type;
    ev->family = family;
    ev->port = port;
    ev->pad = 0;
    __builtin_memset(ev->addr, 0, sizeof(ev->addr));
    if (family == AF_INET)
        __builtin_memcpy(ev->addr, &sa[4], 4);
    else if (family == AF_INET6)
        __builtin_memcpy(ev->addr, &sa[8], 16);
    ev->payload_len = 0;
    if (!connecting && ubuf && len > 0 && ret > 0) {
        __u32 n = len > QK_NET_PAYLOAD - 1 ? QK_NET_PAYLOAD - 1 : len;
        if (bpf_probe_read_user(ev->payload, n & (QK_NET_PAYLOAD - 1), ubuf) == 0)
            ev->payload_len = n & (QK_NET_PAYLOAD - 1);
    }
    submit(ev, offsetof(struct qk_net_event, payload) + ev->payload_len, stats);
    return 0;
}

/* Counts, for a traced task, a syscall that makes its recording incomplete without being recorded. */
enum unrecorded { UNRECORDED_COMPAT, UNRECORDED_IO_URING, REFUSED_IO_URING };

static __always_inline void count_unrecorded(enum unrecorded what)
{
    __u64 cg;
    struct qk_task_stats *stats = tracked_task(&cg);
    if (!stats)
        return;
    if (what == UNRECORDED_IO_URING)
        __sync_fetch_and_add(&stats->io_uring_unseen, 1);
    else if (what == REFUSED_IO_URING)
        __sync_fetch_and_add(&stats->io_uring_refused, 1);
    else
        __sync_fetch_and_add(&stats->compat, 1);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(qk_sys_exit, struct pt_regs *regs, long ret)
{
    if (!qk_g.ntracked)
        return 0;
    long nr = regs->orig_ax; /* a typed tracepoint argument: a plain load, not a helper call */
    if (nr < 0)
        return 0; /* no syscall (cancelled by ptrace or seccomp) */
    struct task_struct *task = bpf_get_current_task_btf();
    if ((task->thread_info.status & TS_COMPAT) || (nr & X32_SYSCALL_BIT)) {
        count_unrecorded(UNRECORDED_COMPAT);
        return 0;
    }
    if (nr == NR_io_uring_setup && ret == -ENOSYS) { /* refused: enforce's seccomp filter */
        count_unrecorded(REFUSED_IO_URING);
        return 0;
    }
    if (nr == NR_io_uring_setup && ret >= 0 && qk_g.io_uring_blind) {
        count_unrecorded(UNRECORDED_IO_URING);
        return 0;
    }
    if (nr == NR_connect || nr == NR_sendto || nr == NR_sendmsg || nr == NR_sendmmsg || nr == NR_recvfrom ||
        nr == NR_recvmsg) {
        qk_record_net(nr, regs->di, regs->si, regs->r8, ret);
        return 0;
    }
    struct plan p = {.fd = -1, .nat = 1, .dirfd = {QK_AT_FDCWD, QK_AT_FDCWD}};
    plan_for(nr, regs, &p);
    if (p.op)
        qk_record_plan(&p, ret);
    return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(qk_fork, struct task_struct *parent, struct task_struct *child)
{
    if (!qk_g.root_dentry && qk_g.owner_tgid && (bpf_get_current_pid_tgid() >> 32) == qk_g.owner_tgid) {
        /* qk's first thread or child: where qk's paths start, for every walk from now on */
        qk_g.root_mnt = (__u64)BPF_CORE_READ(parent, fs, root.mnt);
        qk_g.root_dentry = (__u64)BPF_CORE_READ(parent, fs, root.dentry);
    }
    if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
        return 0; /* a thread: its accesses are its process's */
    __u64 cg;
    struct qk_task_stats *stats = tracked_task(&cg);
    if (!stats)
        return 0;
    __u32 child_tgid = BPF_CORE_READ(child, tgid);
    if (bpf_map_update_elem(&members, &child_tgid, &cg, BPF_ANY) != 0)
        __sync_fetch_and_add(&stats->unfollowed, 1);
    struct qk_fork_event ev = {};
    fill_header(&ev.h, QK_EV_FORK, cg);
    ev.h.pid = BPF_CORE_READ(parent, tgid);
    ev.child_pid = BPF_CORE_READ(child, tgid);
    submit(&ev, sizeof(ev), stats);
    return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(qk_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
    __u64 cg;
    struct qk_task_stats *stats = tracked_task(&cg);
    if (!stats)
        return 0;
    /* The command's first process was forked by qk, outside any task: it joins here. */
    __u32 tgid = bpf_get_current_pid_tgid() >> 32;
    if (bpf_map_update_elem(&members, &tgid, &cg, BPF_NOEXIST) != 0 && !bpf_map_lookup_elem(&members, &tgid))
        __sync_fetch_and_add(&stats->unfollowed, 1);
    struct qk_exec_event *ev = scratch();
    if (!ev)
        return 0;
    fill_header(&ev->h, QK_EV_EXEC, cg);
    ev->ppid = BPF_CORE_READ(p, real_parent, tgid);
    ev->info = 0;
    struct qk_pieces *pc = &ev->p;
    pc->count = 0;
    pc->used = 0;
    pc->truncated = 0;

    /* filename as passed (a kernel copy), then the cwd it is relative to */
    long n = bpf_probe_read_kernel_str(pc->data, QK_PIECE_MAX, BPF_CORE_READ(bprm, filename));
    pc->len[0] = n > 0 ? n - 1 : 0;
    pc->used = pc->len[0];
    pc->count = 1;
    qk_put_cwd(pc);

    /* argv from the new image's stack: the old pointers are gone after a successful exec */
    unsigned long start = BPF_CORE_READ(p, mm, arg_start), end = BPF_CORE_READ(p, mm, arg_end);
    unsigned long len = end > start ? end - start : 0;
    if (len > QK_PIECE_MAX) {
        len = QK_PIECE_MAX;
        ev->info |= QK_INFO_ARGV_TRUNCATED;
    }
    __u32 i = next_piece(pc);
    __u32 off = pc->used & QK_OFF_MASK;
    pc->len[i] = 0;
    if (len && bpf_probe_read_user(&pc->data[off], len & (2 * QK_PIECE_MAX - 1), (void *)start) == 0) {
        pc->len[i] = len;
        pc->used = off + len;
    }
    struct file *exe = BPF_CORE_READ(bprm, file);
    qk_put_path(pc, (__u64)BPF_CORE_READ(exe, f_path.mnt), (__u64)BPF_CORE_READ(exe, f_path.dentry));

    char hdr[5] = {};
    bpf_probe_read_kernel(hdr, sizeof(hdr), BPF_CORE_READ(bprm, buf));
    if (hdr[0] == 0x7f && hdr[1] == 'E' && hdr[2] == 'L' && hdr[3] == 'F' && hdr[4] == 1)
        ev->info |= QK_INFO_ELF32;
    submit(ev, offsetof(struct qk_exec_event, p.data) + (pc->used & QK_OFF_MASK), stats);
    return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(qk_exit, struct task_struct *p, bool group_dead)
{
    if (!group_dead || !qk_g.ntracked)
        return 0;
    __u64 cg;
    struct qk_task_stats *stats = tracked_task(&cg);
    __u32 tgid = BPF_CORE_READ(p, tgid);
    bpf_map_delete_elem(&members, &tgid); /* even if its task is no longer traced: its pid may be reused */
    if (!stats)
        return 0;
    struct qk_exit_event ev = {};
    fill_header(&ev.h, QK_EV_EXIT, cg);
    ev.status = BPF_CORE_READ(p, exit_code);
    submit(&ev, sizeof(ev), stats);
    return 0;
}

/* io_uring ops bypass the syscall tracepoints. We do not decode them: a task that submits a file
 * operation through a ring is counted, and its recording is incomplete. Other ring I/O is fine.
 * A raw tracepoint, attached by name, so that a kernel without it (io_uring not built in, or an
 * older name) fails only this attach, not the load; the type check keeps the load valid there. */
SEC("raw_tp/io_uring_submit_req")
int BPF_PROG(qk_io_uring_submit, struct io_kiocb *req)
{
    if (!bpf_core_type_exists(struct io_kiocb))
        return 0;
    __u64 cg;
    struct qk_task_stats *stats = tracked_task(&cg);
    if (!stats)
        return 0;
    switch (BPF_CORE_READ(req, opcode)) {
    case 18: /* IORING_OP_OPENAT */
    case 28: /* IORING_OP_OPENAT2 */
    case 35: /* IORING_OP_RENAMEAT */
    case 36: /* IORING_OP_UNLINKAT */
    case 37: /* IORING_OP_MKDIRAT */
    case 38: /* IORING_OP_SYMLINKAT */
    case 39: /* IORING_OP_LINKAT */
        __sync_fetch_and_add(&stats->io_uring_fs, 1);
    }
    return 0;
}
