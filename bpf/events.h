/* The wire format between the BPF recorder (bpf/recorder.bpf.c) and userspace (src/record/ebpf_*).
 *
 * Plain C, fixed-width types only, explicit padding: both clang -target bpf and g++ include it.
 * Bump QK_ABI_VERSION on any change; userspace checks the version the loaded object reports and the
 * C++ side static_asserts the layout (src/record/ebpf_decode.cpp).
 */
#ifndef QK_BPF_EVENTS_H
#define QK_BPF_EVENTS_H

#ifdef __bpf__
typedef __u8 qk_u8;
typedef __u16 qk_u16;
typedef __u32 qk_u32;
typedef __s32 qk_s32;
typedef __u64 qk_u64;
#else
#include <stdint.h>
typedef uint8_t qk_u8;
typedef uint16_t qk_u16;
typedef uint32_t qk_u32;
typedef int32_t qk_s32;
typedef uint64_t qk_u64;
#endif

#define QK_ABI_VERSION 11

/* One piece of text (a path, a base directory, argv) is at most this long, NUL excluded. A path the
 * kernel would let a task use can be longer (relative to a deep cwd); such a piece is flagged
 * truncated and its task's recording is incomplete. */
#define QK_PIECE_MAX 4096
#define QK_MAX_PIECES 4
/* Room for QK_MAX_PIECES pieces plus the slack the verifier needs to prove bounded writes. */
#define QK_DATA_SIZE ((QK_MAX_PIECES + 1) * QK_PIECE_MAX)

enum qk_kind {
    QK_EV_FILE = 1, /* a file syscall returned: see enum qk_op */
    QK_EV_EXEC = 2, /* a successful exec (sched_process_exec) */
    QK_EV_FORK = 3, /* a new process (not a thread) */
    QK_EV_EXIT = 4, /* a whole process exited */
    QK_EV_NET = 5,  /* a connect, or a datagram sent or received: see enum qk_net_op */
};

/* The network calls (ABI 11), of AF_INET and AF_INET6 sockets only:
 *   CONNECT  every connect, whatever it returned (ret: 0, -EINPROGRESS, -ECONNREFUSED, -ENETUNREACH ...)
 *   SEND     a datagram sent (sendto, sendmsg, the first of sendmmsg) on a SOCK_DGRAM socket: with the
 *            address passed, or family 0 on a connected socket (userspace pairs it with the socket's
 *            connect by fd); its first bytes in payload (a DNS query names what was looked up). A send
 *            that failed is sent too, with -errno and no payload (a refusal: no route), but not one that
 *            would block or was interrupted (-EAGAIN, -EINTR, -ENOBUFS), which its sender tries again
 *   RECV     a datagram received (recvfrom, recvmsg) on a SOCK_DGRAM socket: its first bytes (a DNS
 *            answer names what a lookup resolved to). DNS is told by its payload, not its port: a
 *            resolver may ask a server on another port.
 * Stream sockets' sends and receives are never recorded: only their connect is. */
enum qk_net_op {
    QK_NET_CONNECT = 1,
    QK_NET_SEND = 2,
    QK_NET_RECV = 3,
};

/* A DNS message over UDP is 512 bytes unless EDNS stretches it; a query fits, and an answer's first
 * records do. Less is sent when the datagram is shorter. */
#define QK_NET_PAYLOAD 512

/* The file operations. Pieces for each, in order ("base" is the kernel-resolved directory a relative
 * name is relative to; it is empty when the name is absolute):
 *   OPEN      [file path from the returned fd (success only), base, name]
 *   RENAME    [base, old, base, new]           LINK    [base, old, base, new]
 *   UNLINK    [base, name]   RMDIR [base, name] MKDIR  [base, name]   SYMLINK [base, linkpath]
 *   TRUNCATE  [base, name]   FTRUNCATE [file path of fd]
 *   CHDIR     [base, name]   FCHDIR    [file path of fd]
 *   EXEC      [base, name] (failed execs only; successful ones arrive as QK_EV_EXEC)
 *   OPEN_HANDLE [file path from the returned fd] (open_by_handle_at: no name was passed)
 *   MKNOD     [base, name], flags: the mode
 *   REMAP     [] flags: the syscall number. A mount, pivot_root, setns or detached mount (fsmount,
 *             open_tree's clone) that succeeded: from then on paths through it name an alias.
 * A "base" for an absolute name is empty, unless the task's root is not qk's (chroot): then it is
 * that root, and the name is sent without its leading '/'.
 *   LOOK      [base, name]: a stat, statx, access or faccessat that found nothing (ENOENT) or was
 *             refused (EACCES); sent only for a task with QK_TASK_LOOKUPS, never when it succeeded
 * Failed calls are sent for OPEN and EXEC: ENOENT unless the task has QK_TASK_NO_PROBES, EACCES,
 * EPERM and EROFS when it has QK_TASK_DENIALS; an OPEN that failed has an empty first piece. LOOK is sent only
 * as a failure: ENOENT as OPEN's, EACCES when the task has QK_TASK_DENIALS. RENAME, UNLINK, RMDIR, MKDIR, LINK, SYMLINK, TRUNCATE and MKNOD are sent
 * failed only with EACCES, EPERM, EROFS or EOVERFLOW (the overlay could not copy up a read mask's
 * stand-in), when the task has QK_TASK_DENIALS: a change refused; LINK with EXDEV too (Landlock refusing
 * a link across its rules, or a link out of the overlay's mount: its source was not reached). */
enum qk_op {
    QK_OP_OPEN = 1,
    QK_OP_RENAME = 2,
    QK_OP_UNLINK = 3,
    QK_OP_RMDIR = 4,
    QK_OP_MKDIR = 5,
    QK_OP_LINK = 6,
    QK_OP_SYMLINK = 7,
    QK_OP_TRUNCATE = 8,
    QK_OP_FTRUNCATE = 9,
    QK_OP_CHDIR = 10,
    QK_OP_FCHDIR = 11,
    QK_OP_EXEC = 12,
    QK_OP_OPEN_HANDLE = 13,
    QK_OP_MKNOD = 14,
    QK_OP_REMAP = 15,
    QK_OP_LOOK = 16,
};

/* qk_file_event.info bits */
#define QK_INFO_CREATED 0x1u    /* the open created the file (FMODE_CREATED) */
#define QK_INFO_DIRECTORY 0x2u  /* the opened file is a directory */
#define QK_INFO_REMOVEDIR 0x4u  /* unlinkat with AT_REMOVEDIR */
/* qk_exec_event.info bits */
#define QK_INFO_ELF32 0x10u           /* the new image is a 32-bit ELF: its syscalls are not decoded */
#define QK_INFO_ARGV_TRUNCATED 0x20u  /* argv was longer than QK_PIECE_MAX */

struct qk_event_header {
    qk_u16 kind;      /* enum qk_kind */
    qk_u16 abi;       /* QK_ABI_VERSION */
    qk_u32 size;      /* bytes of the whole record */
    qk_u64 cgroup_id; /* the traced task's cgroup (an ancestor of the caller's, or its own) */
    qk_u32 pid;       /* tgid */
    qk_u32 tid;
};

/* Text pieces (paths, argv) stored back to back in data, lengths in len[], no NULs. A piece whose
 * bit is set in `truncated` did not fit in QK_PIECE_MAX. Only `used` bytes of data are sent. */
struct qk_pieces {
    qk_u16 len[QK_MAX_PIECES];
    qk_u8 truncated;
    qk_u8 count;
    qk_u16 used;
    char data[QK_DATA_SIZE];
};

struct qk_file_event {
    struct qk_event_header h;
    qk_u32 op;    /* enum qk_op */
    qk_s32 ret;   /* the syscall's result: an fd, 0, or -errno */
    qk_u32 flags; /* open flags, rename flags or the *at flags, as passed */
    qk_u32 info;  /* QK_INFO_* */
    struct qk_pieces p;
};

/* EXEC pieces: [filename as passed to exec, cwd, argv (NUL-separated), executable's path] */
struct qk_exec_event {
    struct qk_event_header h;
    qk_u32 ppid;
    qk_u32 info;
    struct qk_pieces p;
};

struct qk_fork_event {
    struct qk_event_header h; /* pid: the parent */
    qk_u32 child_pid;
    qk_u32 pad;
};

struct qk_exit_event {
    struct qk_event_header h;
    qk_s32 status; /* as wait(2) reports it: (code << 8) | signal */
    qk_u32 pad;
};

struct qk_net_event {
    struct qk_event_header h;
    qk_u32 op;          /* enum qk_net_op */
    qk_s32 ret;         /* the call's result: 0 or -errno for connect, bytes (or a send's -errno) otherwise */
    qk_s32 fd;
    qk_u16 sock_type;   /* SOCK_STREAM (1), SOCK_DGRAM (2) */
    qk_u16 family;      /* AF_INET (2), AF_INET6 (10); 0: no address passed */
    qk_u16 port;        /* host order */
    qk_u16 payload_len; /* bytes of payload sent */
    qk_u32 pad;
    qk_u8 addr[16];     /* the first 4 for AF_INET */
    qk_u8 payload[QK_NET_PAYLOAD];
};

/* Per traced cgroup, kept in the `tracked` map. A process belongs to a task by its cgroup, or by the
 * `members` map, which follows the process tree from fork so that leaving the cgroup hides nothing.
 * Updated atomically by the programs. */
struct qk_task_stats {
    qk_u64 events;      /* records submitted */
    qk_u64 lost;        /* records that could not be reserved in the ring buffer */
    qk_u64 compat;      /* 32-bit (ia32/x32) syscalls, which the programs do not decode */
    qk_u64 io_uring_fs; /* io_uring file operations (open, rename, unlink, mkdir, link, symlink) */
    qk_u64 io_uring_unseen; /* rings set up while io_uring's tracepoint could not be attached */
    qk_u64 options;     /* QK_TASK_*, set by userspace when it starts tracking the cgroup */
    qk_u64 unfollowed;  /* processes forked that the `members` map had no room for */
    qk_u64 io_uring_refused; /* io_uring_setup calls that failed with ENOSYS (enforce's seccomp filter) */
};

/* Failed lookups (ENOENT opens and execs) are not recorded: for a caller that judges only reads and
 * writes (the audit), whose tools probe far more paths than they open. */
#define QK_TASK_NO_PROBES 1ULL
/* Opens, execs and changes (rename, unlink, mkdir ...) refused with EACCES, EPERM or EROFS are recorded (their
 * ret says which): for a caller that names what a confinement refused (enforce, qk-trace). Every other
 * failure is never recorded. */
#define QK_TASK_DENIALS 2ULL
/* Only refusals are recorded: no success, no probe (enforce, which judges writes by its overlay's upper
 * layer and needs only what Landlock refused). With QK_TASK_DENIALS. Process events still come. Probes,
 * when asked for too (enforce over a read mask), are sent once per task for each name and the directory
 * it was looked up from, however often it is looked up. */
#define QK_TASK_DENIALS_ONLY 4ULL
/* Lookups that only look (stat, statx, access, faccessat) are sent as LOOK when they found nothing (as
 * probes: without QK_TASK_NO_PROBES) or were refused (EACCES, with QK_TASK_DENIALS): for enforce over a
 * read mask, where a file the task may not read stands there unreadable and tools check before they open. */
#define QK_TASK_LOOKUPS 8ULL

/* The programs' globals (.bss), written by userspace through the mmapped map
 * (src/record/ebpf_session.cpp). */
struct qk_globals {
    qk_u32 ntracked;      /* how many cgroups are traced; 0 makes every program return at once */
    qk_u32 track_level;   /* ancestor level of task cgroups, for processes in cgroups below them */
    qk_u64 wakeup_bytes;  /* unread bytes above which a submit wakes the consumer */
    qk_u32 io_uring_blind; /* io_uring's tracepoint is not attached: count io_uring_setup instead */
    qk_u32 owner_tgid;    /* qk itself, set by userspace: its first fork captures its root below */
    qk_u64 root_dentry;   /* qk's root (kernel pointers): where path walks stop, so that a task's */
    qk_u64 root_mnt;      /* chroot is seen through, and a qk in a chroot sees paths as it does */
};

#endif
