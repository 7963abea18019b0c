/* The light skeleton behind struct qk_bpf_object (see ebpf_object.h). */
#include "ebpf_object.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>

#include "recorder.lskel.h"

_Static_assert(sizeof(((struct recorder *)0)->bss->qk_g) == sizeof(struct qk_globals),
               "the skeleton's .bss holds struct qk_globals");

/* Keeps the last lines of a verifier log that did not fit: the reason for a rejection is at its end. */
static void keep_tail(char *log, size_t size)
{
    size_t n = strnlen(log, size);
    if (n == size && size > 0)
        log[--n] = '\0';
    const size_t keep = 1200;
    if (n <= keep)
        return;
    const char *start = log + n - keep;
    const char *nl = strchr(start, '\n');
    if (nl && nl[1])
        start = nl + 1;
    memmove(log, start, strlen(start) + 1);
}

static int load_once(struct qk_bpf_object *o, qk_u32 ring_bytes, qk_u32 log_level, char *log, size_t log_size)
{
    struct recorder *s = recorder__open();
    if (!s)
        return -ENOMEM;
    o->skel = s;
    s->maps.events.max_entries = ring_bytes;
    if (log_level && log && log_size) {
        log[0] = '\0';
        s->ctx.log_level = log_level;
        s->ctx.log_size = (__u32)log_size;
        s->ctx.log_buf = (__u64)(unsigned long)log;
    }
    int err = recorder__load(s);
    if (err)
        return err < 0 ? err : -err;
    o->events_fd = s->maps.events.map_fd;
    o->tracked_fd = s->maps.tracked.map_fd;
    o->members_fd = s->maps.members.map_fd;
    o->globals = &s->bss->qk_g;
    o->abi_version = s->rodata->qk_abi_version;
    return 0;
}

int qk_bpf_object_load(struct qk_bpf_object *o, qk_u32 ring_bytes, const char **stage, char *log, size_t log_size)
{
    memset(o, 0, sizeof(*o));
    o->events_fd = o->tracked_fd = o->members_fd = -1;
    *stage = "cannot load the BPF recorder";
    if (log && log_size)
        log[0] = '\0';
    int err = load_once(o, ring_bytes, 0, log, log_size);
    if (err == 0 || err == -EPERM || err == -EACCES || err == -ENOMEM)
        return err;
    /* Rejected: load again with the verifier's log, which only a failure needs (it is slow). */
    qk_bpf_object_destroy(o);
    o->events_fd = o->tracked_fd = o->members_fd = -1;
    int again = load_once(o, ring_bytes, 1, log, log_size);
    if (log && log_size)
        keep_tail(log, log_size);
    if (again == 0) /* loaded the second time: let it be */
        return 0;
    return err;
}

/* The skeleton's attach functions return the link's fd, or -1 with errno set. */
static int attached(int fd)
{
    return fd > 0 ? 0 : (errno ? -errno : -EINVAL);
}

int qk_bpf_object_attach(struct qk_bpf_object *o, int with_io_uring, const char **stage)
{
    struct recorder *s = o->skel;
    *stage = "cannot attach the BPF recorder";
    int err = attached(recorder__qk_sys_exit__attach(s));
    if (!err)
        err = attached(recorder__qk_fork__attach(s));
    if (!err)
        err = attached(recorder__qk_exec__attach(s));
    if (!err)
        err = attached(recorder__qk_exit__attach(s));
    if (err)
        return err;
    o->io_uring_attached = with_io_uring && attached(recorder__qk_io_uring_submit__attach(s)) == 0;
    return 0;
}

void qk_bpf_object_describe(const struct qk_bpf_object *o, char *out, size_t size)
{
    const struct recorder *s = o->skel;
    const struct bpf_prog_desc *progs = (const struct bpf_prog_desc *)&s->progs;
    size_t n = sizeof(s->progs) / sizeof(progs[0]), used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        struct bpf_prog_info info;
        __u32 len = sizeof(info);
        memset(&info, 0, sizeof(info));
        if (progs[i].prog_fd <= 0 || bpf_obj_get_info_by_fd(progs[i].prog_fd, &info, &len) != 0)
            continue;
        int w = snprintf(out + used, size - used, "  %s: %u instructions, %u verified\n", info.name,
                         info.xlated_prog_len / 8, info.verified_insns);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

void qk_bpf_object_destroy(struct qk_bpf_object *o)
{
    if (o->skel)
        recorder__destroy(o->skel);
    o->skel = NULL;
    o->globals = NULL;
}
