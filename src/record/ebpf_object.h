/* The recorder's BPF object as loaded in the kernel: its maps, its globals and its attached programs.
 *
 * Plain C, because the bpftool light skeleton behind it is C that C++ does not compile; EbpfSession
 * (ebpf_session.cpp) is its only user. The light skeleton's loader program makes the kernel create the
 * maps, relocate the CO-RE accesses against its own BTF and verify the programs: loading costs about
 * 10 ms, where libbpf's skeleton spent 20 ms more parsing vmlinux BTF in userspace. */
#ifndef QK_RECORD_EBPF_OBJECT_H
#define QK_RECORD_EBPF_OBJECT_H

#include <stddef.h>

#include "events.h"

#ifdef __cplusplus
extern "C" {
#endif

struct qk_bpf_object {
    void *skel;                  /* the light skeleton (struct recorder) */
    int events_fd;               /* the ring buffer */
    int tracked_fd;              /* traced cgroup id -> struct qk_task_stats */
    int members_fd;              /* tgid -> its task's cgroup id: the process tree followed from fork */
    struct qk_globals *globals;  /* the programs' .bss, mmapped: writes are seen by the programs */
    qk_u32 abi_version;          /* QK_ABI_VERSION as the object was built */
    int io_uring_attached;       /* 0: the kernel has no io_uring_submit_req tracepoint */
};

/* Loads the programs and creates the maps, with a ring buffer of ring_bytes (a power of two, at least a
 * page). Returns 0, or a negative errno with *stage saying what failed and, where the kernel gave one,
 * the end of its verifier log in log (NUL-terminated, log_size bytes at most). */
int qk_bpf_object_load(struct qk_bpf_object *o, qk_u32 ring_bytes, const char **stage, char *log, size_t log_size);

/* Attaches every program. io_uring's tracepoint is optional: where it cannot be attached (or with_io_uring
 * is 0, which acts as such a kernel), io_uring_attached stays 0 and the caller decides. Returns 0 or a
 * negative errno, *stage set. */
int qk_bpf_object_attach(struct qk_bpf_object *o, int with_io_uring, const char **stage);

/* One line per loaded program: its name, its size and how many instructions the verifier walked (the
 * load's cost grows with the latter). For QK_DEBUG_BPF. */
void qk_bpf_object_describe(const struct qk_bpf_object *o, char *out, size_t size);

/* Detaches every program and frees the object. Safe on a zeroed or half-loaded object. */
void qk_bpf_object_destroy(struct qk_bpf_object *o);

#ifdef __cplusplus
}
#endif

#endif
