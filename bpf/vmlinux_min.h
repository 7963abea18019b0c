/* The few kernel types the recorder reads, declared by hand.
 *
 * CO-RE relocates every field access by name against the running kernel's BTF, so these partial
 * structs need only the fields we touch, in any order. Keeping them here (instead of a 130,000-line
 * generated vmlinux.h) makes the build independent of the build machine's kernel and shows exactly
 * which kernel internals the recorder depends on.
 */
#ifndef QK_VMLINUX_MIN_H
#define QK_VMLINUX_MIN_H

typedef unsigned char __u8;
typedef short unsigned int __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long int __s64;
typedef long long unsigned int __u64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef int pid_t;
typedef unsigned int fmode_t;
typedef unsigned short umode_t;
typedef _Bool bool;
#define true 1
#define false 0

enum {
    BPF_ANY = 0,
    BPF_NOEXIST = 1,
    BPF_EXIST = 2,
};
enum {
    BPF_RB_NO_WAKEUP = 1,
    BPF_RB_FORCE_WAKEUP = 2,
};
enum {
    BPF_RB_AVAIL_DATA = 0,
    BPF_RB_RING_SIZE = 1,
};
enum bpf_map_type {
    BPF_MAP_TYPE_HASH = 1,
    BPF_MAP_TYPE_ARRAY = 2,
    BPF_MAP_TYPE_PERCPU_ARRAY = 6,
    BPF_MAP_TYPE_LRU_HASH = 9,
    BPF_MAP_TYPE_RINGBUF = 27,
};

/* Not relocated: layouts that are ABI (pt_regs is the x86_64 entry stack frame) or have not moved in
 * two decades (the head of fdtable). Read them with plain loads or bpf_probe_read_kernel, never
 * BPF_CORE_READ, which relocates whatever it is given. Each relocated type costs a search of the
 * kernel's BTF at load; the kernel caches those searches in a small table, and io_kiocb, fdtable and
 * qstr share a slot there, so relocating all three repeated two searches on every load (about 1.5 ms). */
struct pt_regs {
    long unsigned int r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di;
    long unsigned int orig_ax;
};

struct file;
struct fdtable {
    unsigned int max_fds;
    struct file **fd;
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct qstr {
    u32 len;
    const unsigned char *name;
};

struct inode {
    umode_t i_mode;
};

struct dentry {
    struct dentry *d_parent;
    struct qstr d_name;
    struct inode *d_inode;
};

struct vfsmount {
    struct dentry *mnt_root;
};

struct mount {
    struct mount *mnt_parent;
    struct dentry *mnt_mountpoint;
    struct vfsmount mnt;
};

struct path {
    struct vfsmount *mnt;
    struct dentry *dentry;
};

struct file {
    struct path f_path;
    struct inode *f_inode;
    fmode_t f_mode;
    unsigned int f_flags;
    void *private_data; /* a socket's struct socket */
};

struct socket {
    short type; /* SOCK_STREAM, SOCK_DGRAM */
};

struct files_struct {
    struct fdtable *fdt;
};

struct fs_struct {
    struct path root;
    struct path pwd;
};

struct mm_struct {
    long unsigned int arg_start;
    long unsigned int arg_end;
    struct file *exe_file;
};

struct thread_info {
    u32 status;
};

struct task_struct {
    struct thread_info thread_info;
    unsigned int flags;
    pid_t pid;
    pid_t tgid;
    int exit_code;
    struct task_struct *real_parent;
    struct task_struct *group_leader;
    struct mm_struct *mm;
    struct fs_struct *fs;
    struct files_struct *files;
};

struct linux_binprm {
    struct file *file;
    const char *filename;
    char buf[256];
};

struct io_kiocb {
    u8 opcode;
};

#pragma clang attribute pop

#endif
