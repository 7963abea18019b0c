/* Building the text pieces of a record: kernel paths walked from dentries, and user strings.
 *
 * bpf_d_path() is not allowed in tracepoints, so a path is rebuilt the way the kernel's d_path does:
 * up d_parent to the mount's root, then across to the mount point in the parent mount, until qk's
 * own root or the namespace's root. Not the task's root: a task that chroots into dir/ and opens /t
 * opened dir/t, and that is what qk must judge. Written backwards into a per-CPU buffer, then
 * copied into the record.
 *
 * The functions here are global (not inlined) on purpose: the verifier checks a global function once,
 * not once per call site, which keeps the sys_exit dispatcher far below the instruction limit. */
#ifndef QK_BPF_PATHS_H
#define QK_BPF_PATHS_H

#include "maps.h"

#define QK_NAME_MAX 255
/* Each component costs at least 2 bytes ("/x") and mount crossings cost none, so this bounds any
 * walk that fits in QK_PIECE_MAX, with room for the crossings. */
#define QK_WALK_STEPS (QK_PIECE_MAX / 2 + 64)
#define QK_OFF_MASK (QK_MAX_PIECES * QK_PIECE_MAX - 1)
#define QK_AT_FDCWD -100

/* The walk's state lives in the per-CPU map value, not on the stack: values the verifier reads from a
 * map are unknown scalars, so every iteration of the loop below looks the same to it and the callback
 * is verified about once. State on the stack made it re-verify the callback for every distinct range
 * of `pos` (some 140 times, most of the load's verification time). */
struct walk_buf {
    __u64 dentry;
    __u64 vfsmnt;
    __u64 mnt_root;    /* vfsmnt's root: read once per mount, not once per component */
    __u64 root_dentry; /* qk's root (0 until captured: the namespace's root is the end then) */
    __u64 root_vfsmnt;
    __s32 pos;         /* the path is buf[pos, QK_PIECE_MAX) */
    __s32 truncated;
    char buf[2 * QK_PIECE_MAX];
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct walk_buf);
    __uint(max_entries, 1);
} scratch_walk SEC(".maps");

static __always_inline struct walk_buf *walk_state(void)
{
    __u32 zero = 0;
    return bpf_map_lookup_elem(&scratch_walk, &zero);
}

/* d_parent and d_name (hash, len, name) sit together in struct dentry: one read fetches all three
 * instead of three helper calls per component. Offsets come from CO-RE (all relative to dentry, so no
 * other type is relocated for them), so a kernel that moves them apart falls back to reading them one
 * by one. */
#define QK_DENTRY_CHUNK 32
struct dentry_fields {
    struct dentry *parent;
    const unsigned char *name;
    __u32 len;
};

static __always_inline void read_dentry(struct dentry *d, struct dentry_fields *out)
{
    __u32 parent_off = bpf_core_field_offset(struct dentry, d_parent);
    __u32 len_off = bpf_core_field_offset(struct dentry, d_name.len);
    __u32 name_off = bpf_core_field_offset(struct dentry, d_name.name);
    if (len_off > parent_off && name_off > parent_off && name_off + 8 - parent_off <= QK_DENTRY_CHUNK &&
        len_off + 4 - parent_off <= QK_DENTRY_CHUNK) {
        char chunk[QK_DENTRY_CHUNK];
        __u32 rel_len = (len_off - parent_off) & (QK_DENTRY_CHUNK - 4);
        __u32 rel_name = (name_off - parent_off) & (QK_DENTRY_CHUNK - 8);
        __u32 size = (name_off + 8 - parent_off) & (2 * QK_DENTRY_CHUNK - 1);
        if (size <= QK_DENTRY_CHUNK && bpf_probe_read_kernel(chunk, size, (char *)d + parent_off) == 0) {
            out->parent = *(struct dentry **)chunk;
            out->len = *(__u32 *)(chunk + rel_len);
            out->name = *(const unsigned char **)(chunk + rel_name);
            return;
        }
    }
    out->parent = BPF_CORE_READ(d, d_parent);
    out->len = BPF_CORE_READ(d, d_name.len);
    out->name = BPF_CORE_READ(d, d_name.name);
}

static long walk_step(__u32 index, void *unused)
{
    struct walk_buf *w = walk_state();
    if (!w)
        return 1;
    struct dentry *d = (struct dentry *)w->dentry;
    struct vfsmount *vfsmnt = (struct vfsmount *)w->vfsmnt;
    if (w->dentry == w->root_dentry && w->vfsmnt == w->root_vfsmnt)
        return 1;
    if (w->dentry == w->mnt_root) {
        struct mount *mnt = (struct mount *)((char *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
        struct mount *parent = BPF_CORE_READ(mnt, mnt_parent);
        if (parent == mnt)
            return 1;
        w->dentry = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
        struct vfsmount *up = (struct vfsmount *)((char *)parent + bpf_core_field_offset(struct mount, mnt));
        w->vfsmnt = (__u64)up;
        w->mnt_root = (__u64)BPF_CORE_READ(up, mnt_root);
        return 0;
    }
    struct dentry_fields f;
    read_dentry(d, &f);
    if (f.parent == d)
        return 1;
    int pos = w->pos - (int)f.len - 1;
    if (f.len > QK_NAME_MAX || pos < 0) {
        w->truncated = 1;
        return 1;
    }
    bpf_probe_read_kernel(&w->buf[(pos + 1) & (QK_PIECE_MAX - 1)], f.len & QK_NAME_MAX, f.name);
    w->buf[pos & (QK_PIECE_MAX - 1)] = '/';
    w->pos = pos;
    w->dentry = (__u64)f.parent;
    return 0;
}

static __always_inline __u32 next_piece(struct qk_pieces *p)
{
    return p->count++ & (QK_MAX_PIECES - 1);
}

__noinline int qk_empty_piece(struct qk_pieces *p)
{
    if (!p)
        return 0;
    p->len[next_piece(p)] = 0;
    return 0;
}

/* Appends the path of (mnt, dentry) as qk sees it. */
__noinline int qk_put_path(struct qk_pieces *p, __u64 mnt, __u64 dentry)
{
    if (!p)
        return 0;
    __u32 i = next_piece(p);
    p->len[i] = 0;
    struct walk_buf *w = walk_state();
    if (!dentry || !mnt || !w)
        return 0;
    w->dentry = dentry;
    w->vfsmnt = mnt;
    w->mnt_root = (__u64)BPF_CORE_READ((struct vfsmount *)mnt, mnt_root);
    w->root_dentry = qk_g.root_dentry;
    w->root_vfsmnt = qk_g.root_mnt;
    w->pos = QK_PIECE_MAX;
    w->truncated = 0;
    bpf_loop(QK_WALK_STEPS, walk_step, 0, 0);
    if (w->truncated)
        p->truncated |= 1 << i;
    __u32 off = p->used & QK_OFF_MASK;
    int pos = w->pos;
    if (pos >= QK_PIECE_MAX || pos < 0) { /* the root itself */
        p->data[off] = '/';
        p->len[i] = 1;
        p->used = off + 1;
        return 0;
    }
    __u32 start = pos & (QK_PIECE_MAX - 1);
    __u32 n = (QK_PIECE_MAX - start) & (2 * QK_PIECE_MAX - 1);
    bpf_probe_read_kernel(&p->data[off], n, &w->buf[start]);
    p->len[i] = n;
    p->used = off + n;
    return 0;
}

__noinline int qk_put_user_str(struct qk_pieces *p, __u64 ustr)
{
    if (!p)
        return 0;
    __u32 i = next_piece(p);
    __u32 off = p->used & QK_OFF_MASK;
    long n = bpf_probe_read_user_str(&p->data[off], QK_PIECE_MAX, (const char *)ustr);
    if (n <= 0) {
        p->len[i] = 0;
        return 0;
    }
    if (n >= QK_PIECE_MAX)
        p->truncated |= 1 << i;
    p->len[i] = n - 1;
    p->used = off + n - 1;
    return 0;
}

static __always_inline struct file *fd_file(long fd)
{
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    /* fdtable's head (max_fds, fd) has not moved in two decades: one plain read, no relocation */
    struct fdtable t = {};
    if (fd < 0 || bpf_probe_read_kernel(&t, sizeof(t), BPF_CORE_READ(task, files, fdt)) != 0 || fd >= t.max_fds)
        return 0;
    struct file *f = 0;
    bpf_probe_read_kernel(&f, sizeof(f), &t.fd[fd]);
    return f;
}

__noinline int qk_put_fd(struct qk_pieces *p, long fd)
{
    struct file *f = fd_file(fd);
    if (!f)
        return qk_empty_piece(p);
    return qk_put_path(p, (__u64)BPF_CORE_READ(f, f_path.mnt), (__u64)BPF_CORE_READ(f, f_path.dentry));
}

__noinline int qk_put_cwd(struct qk_pieces *p)
{
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    return qk_put_path(p, (__u64)BPF_CORE_READ(task, fs, pwd.mnt), (__u64)BPF_CORE_READ(task, fs, pwd.dentry));
}

/* The length of the magic link a name starts with when it names the caller's own descriptor or cwd
 * through /proc ("/proc/self/fd/3", "/proc/thread-self/cwd"), with *fd set to the descriptor (-1 for the
 * cwd); 0 for any other name. Resolving it in userspace would resolve qk's own /proc/self: the kernel
 * side knows whose descriptor it is. /proc/<pid>/ is not decoded: the pid is the caller's namespace's. */
static __always_inline int proc_self_link(const char *name, long *fd)
{
    /* Every absolute open comes here: its first 8 bytes say whether to read more. */
    char head[8] = {};
    bpf_probe_read_user_str(head, sizeof(head), name);
    if (head[0] != '/' || head[1] != 'p' || head[2] != 'r' || head[3] != 'o' || head[4] != 'c' || head[5] != '/')
        return 0;
    char b[32] = {};
    bpf_probe_read_user_str(b, sizeof(b), name);
    int i;
    if (b[6] == 's' && b[7] == 'e' && b[8] == 'l' && b[9] == 'f' && b[10] == '/')
        i = 11;
    else if (b[6] == 't' && b[7] == 'h' && b[8] == 'r' && b[9] == 'e' && b[10] == 'a' && b[11] == 'd' &&
             b[12] == '-' && b[13] == 's' && b[14] == 'e' && b[15] == 'l' && b[16] == 'f' && b[17] == '/')
        i = 18;
    else
        return 0;
    if (b[i] == 'c' && b[i + 1] == 'w' && b[i + 2] == 'd' && (b[i + 3] == '/' || b[i + 3] == 0)) {
        *fd = -1;
        return i + 3;
    }
    /* fd/N of a descriptor that is not open stays as spelled: userspace keeps it so, unplaced. */
    if (b[i] != 'f' || b[i + 1] != 'd' || b[i + 2] != '/')
        return 0;
    long n = 0;
    int digits = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        char c = b[(i + 3 + k) & 31];
        if (c < '0' || c > '9')
            break;
        n = n * 10 + (c - '0');
        digits++;
    }
    char end = b[(i + 3 + digits) & 31];
    if (!digits || (end != '/' && end != 0) || !fd_file(n))
        return 0;
    *fd = n;
    return i + 3 + digits;
}

/* A name relative to dirfd (AT_FDCWD for the cwd): [base, name]. An absolute name has an empty base,
 * unless the task is chrooted away from qk's root: then the base is the task's root and the name loses
 * its leading '/', so that userspace joins them into the path qk sees. */
__noinline int qk_put_at_path(struct qk_pieces *p, long dirfd, __u64 ustr)
{
    char first = 0;
    bpf_probe_read_user(&first, 1, (const char *)ustr);
    long self_fd = 0;
    int magic = first == '/' ? proc_self_link((const char *)ustr, &self_fd) : 0;
    if (magic > 0) {
        /* [the descriptor's or cwd's path, what follows the link without its '/'] */
        if (self_fd < 0)
            qk_put_cwd(p);
        else
            qk_put_fd(p, self_fd);
        char next = 0;
        bpf_probe_read_user(&next, 1, (const char *)ustr + magic);
        return qk_put_user_str(p, ustr + magic + (next == '/' ? 1 : 0));
    }
    if (first == '/') {
        struct task_struct *task = (struct task_struct *)bpf_get_current_task();
        __u64 root_mnt = (__u64)BPF_CORE_READ(task, fs, root.mnt);
        __u64 root_dentry = (__u64)BPF_CORE_READ(task, fs, root.dentry);
        if (!qk_g.root_dentry || (root_dentry == qk_g.root_dentry && root_mnt == qk_g.root_mnt)) {
            qk_empty_piece(p);
        } else {
            qk_put_path(p, root_mnt, root_dentry);
            ustr++;
        }
    } else if ((int)dirfd == QK_AT_FDCWD)
        qk_put_cwd(p);
    else
        qk_put_fd(p, dirfd);
    return qk_put_user_str(p, ustr);
}

#endif
