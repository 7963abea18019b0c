/* Maps and globals of the recorder, and the one question every program asks first:
 * "is the current task being traced, and by which task cgroup?" */
#ifndef QK_BPF_MAPS_H
#define QK_BPF_MAPS_H

#include "events.h"

/* Userspace reads it back to check it loaded the object it was built against. */
const volatile __u32 qk_abi_version = QK_ABI_VERSION;

/* The same sizes src/record/ebpf_decode.cpp asserts for g++: both compilers must agree. */
_Static_assert(sizeof(struct qk_event_header) == 24, "qk_event_header layout");
_Static_assert(sizeof(struct qk_task_stats) == 64 && __builtin_offsetof(struct qk_task_stats, options) == 40,
               "qk_task_stats layout");
_Static_assert(sizeof(struct qk_net_event) == 64 + QK_NET_PAYLOAD && __builtin_offsetof(struct qk_net_event, addr) == 48,
               "qk_net_event layout");
_Static_assert(sizeof(struct qk_net_event) <= sizeof(struct qk_file_event), "a net record is built in scratch_event");
_Static_assert(sizeof(struct qk_globals) == 40 && __builtin_offsetof(struct qk_globals, root_dentry) == 24,
               "qk_globals layout");

/* Written through the mmapped .bss by userspace. */
struct qk_globals qk_g;

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 4 << 20); /* resized by userspace before load */
} events SEC(".maps");

/* Traced task cgroups: id -> counters. A process belongs to a task if its cgroup, or its ancestor at
 * qk_g.track_level, is a key here. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u64);
    __type(value, struct qk_task_stats);
    __uint(max_entries, 4096);
} tracked SEC(".maps");

/* Processes of traced tasks, by tgid -> the task's cgroup id: added at fork (and at a traced process's
 * exec, for the command's first process, which qk forked), removed when the whole process exits. A
 * process that moves itself out of its task's cgroup is still its task's. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u32);
    __type(value, __u64);
    __uint(max_entries, 1 << 16);
} members SEC(".maps");

/* Records are built here, then copied into the ring with their exact size. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct qk_file_event);
    __uint(max_entries, 1);
} scratch_event SEC(".maps");

/* Probes already sent for a task that wants only its refusals (enforce): key -> 1. Over a read mask a
 * probe is what a refused read looks like, so each is needed once per task, not once per lookup (a
 * compiler probes the same header in the same directories for every source; 528,000 probes made up
 * most of enforce's cost on a 50-project build). Least recently used keys make room. */
struct probe_key {
    __u64 cgroup_id;
    __u64 dir_dentry; /* the directory the name is relative to (the task's root for an absolute one) */
    __u64 dir_mnt;
    __u64 name_hash;  /* of the name as passed, and the operation */
};

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __type(key, struct probe_key);
    __type(value, __u8);
    __uint(max_entries, 1 << 15);
} probes_sent SEC(".maps");

/* One cgroup lookup: the ancestor at the task cgroups' level is the process's own cgroup when it sits at
 * that level, and none (0) for the many processes higher up, which are then not looked up at all. */
static __always_inline struct qk_task_stats *tracked_task(__u64 *cgroup_id)
{
    if (!qk_g.ntracked)
        return 0;
    __u64 id = qk_g.track_level ? bpf_get_current_ancestor_cgroup_id(qk_g.track_level) : bpf_get_current_cgroup_id();
    struct qk_task_stats *stats = id ? bpf_map_lookup_elem(&tracked, &id) : 0;
    if (!stats) {
        __u32 tgid = bpf_get_current_pid_tgid() >> 32;
        __u64 *task = bpf_map_lookup_elem(&members, &tgid);
        if (task) {
            id = *task;
            stats = bpf_map_lookup_elem(&tracked, &id);
        }
    }
    if (stats)
        *cgroup_id = id;
    return stats;
}

static __always_inline void *scratch(void)
{
    __u32 zero = 0;
    return bpf_map_lookup_elem(&scratch_event, &zero);
}

static __always_inline void fill_header(struct qk_event_header *h, __u16 kind, __u64 cgroup_id)
{
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    h->kind = kind;
    h->abi = QK_ABI_VERSION;
    h->cgroup_id = cgroup_id;
    h->pid = pid_tgid >> 32;
    h->tid = (__u32)pid_tgid;
}

/* Copies a record into the ring, waking the consumer only once enough has piled up (a wakeup per
 * event costs more than the tracing itself). A record that does not fit is counted, never hidden. */
static __always_inline void submit(void *record, __u64 size, struct qk_task_stats *stats)
{
    __u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > qk_g.wakeup_bytes ? BPF_RB_FORCE_WAKEUP
                                                                                   : BPF_RB_NO_WAKEUP;
    if (size > sizeof(struct qk_file_event))
        size = sizeof(struct qk_file_event);
    ((struct qk_event_header *)record)->size = size;
    if (bpf_ringbuf_output(&events, record, size, flags) == 0)
        __sync_fetch_and_add(&stats->events, 1);
    else
        __sync_fetch_and_add(&stats->lost, 1);
}

#endif
