// Shared helpers of the scenario programs (tests/scenarios/*.c, each compiled alone; include this
// first). They fold the path building, the result checks and the ring setup the programs would
// otherwise each write out, and issue exactly the system calls the caller would issue by hand: no
// helper opens, stats or closes anything its name does not say.
//
// Exit codes, the same in every scenario:
//   0    the scenario did what its header comment says
//   2    no directory argument
//   100  one of the scenario's own operations did not do what the scenario expects
//   101  preparing the scenario failed (a directory fd, a fork, a ring)
#ifndef QK_SCENARIO_H
#define QK_SCENARIO_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

// ---------------------------------------------------------------------------------------------------
// The scenario's directory (argv[1]) and paths in it.

static const char *scenario_dir;

// Takes the scenario's fresh directory from argv[1]; without one, exit 2.
static inline void scenario_start(int argc, char **argv)
{
    if (argc < 2)
        exit(2);
    scenario_dir = argv[1];
}

// "<scenario_dir>/<rel>", in one of four rotating buffers: up to four results may be in use at once
// (both names of a rename, say). Not for threads.
static inline const char *at(const char *rel)
{
    static char bufs[4][8192];
    static unsigned n;
    char *b = bufs[n++ & 3];
    snprintf(b, sizeof bufs[0], "%s/%s", scenario_dir, rel);
    return b;
}

// ---------------------------------------------------------------------------------------------------
// Checking results. Each takes the result of a call made by the caller, so the call itself stays
// visible (and exact: raw syscall or glibc) where the scenario makes it.

// A call that must succeed (a result >= 0: 0, a descriptor, a pid): its result; else exit 100.
static inline long must(long ret, const char *what)
{
    if (ret < 0) {
        perror(what);
        exit(100);
    }
    return ret;
}

// The same for the preparation of a scenario: exit 101.
static inline long must_setup(long ret, const char *what)
{
    if (ret < 0) {
        perror(what);
        exit(101);
    }
    return ret;
}

// A call that must fail with err (a probe's ENOENT, an EEXIST, ...); anything else: exit 100.
static inline void must_fail(long ret, int err, const char *what)
{
    int got = errno;
    if (ret >= 0 || got != err) {
        fprintf(stderr, "%s: expected %s, got %s\n", what, strerrorname_np(err),
                ret >= 0 ? "success" : strerrorname_np(got));
        exit(100);
    }
}

// An open's result: a descriptor, closed again at once; or, when expect_errno is not 0, a failure
// with that errno. Anything else: exit 100.
static inline void opened(long fd, int expect_errno, const char *what)
{
    if (expect_errno)
        must_fail(fd, expect_errno, what);
    else
        close((int)must(fd, what));
}

// ---------------------------------------------------------------------------------------------------
// Opens through glibc. glibc's open(path, flags, mode) is openat(AT_FDCWD, path, flags, mode) and
// passes the mode only with O_CREAT or O_TMPFILE (0 otherwise), so these are the very system calls of
// an open(path, flags) written out.

// open(path, flags), which must succeed; closed again.
static inline void open_close(const char *path, int flags)
{
    opened(open(path, flags, 0644), 0, path);
}

// open(path, flags), which must fail with err.
static inline void open_fails(const char *path, int flags, int err)
{
    must_fail(open(path, flags, 0644), err, path);
}

// Creates path, which must not exist yet: open(O_WRONLY|O_CREAT|O_EXCL, 0644), closed again.
static inline void create_file(const char *path)
{
    open_close(path, O_WRONLY | O_CREAT | O_EXCL);
}

// openat(at_fd, path, O_PATH|O_DIRECTORY): a directory fd for the *at calls (an O_PATH open records
// nothing). Preparation: exit 101 if it fails.
static inline int dir_fd(int at_fd, const char *path)
{
    return must_setup(openat(at_fd, path, O_PATH | O_DIRECTORY), path);
}

// The open intents that open.c, openat.c and openat2.c each exercise, in this order, on the files the
// test lays out (OPEN_SETUP in tests/e2e/scenarios.py). op opens rel with flags; every open must
// succeed but excl.txt's, which must fail with EEXIST.
static inline void open_each_intent(void (*op)(const char *rel, int flags, int expect_errno))
{
    op("r.txt", O_RDONLY, 0);
    op("w.txt", O_WRONLY, 0);
    op("rw.txt", O_RDWR, 0);
    op("t.txt", O_WRONLY | O_TRUNC, 0);
    op("rt.txt", O_RDONLY | O_TRUNC, 0);
    op("c.txt", O_WRONLY | O_CREAT, 0);
    op("exists.txt", O_WRONLY | O_CREAT, 0);
    op("x.txt", O_WRONLY | O_CREAT | O_EXCL, 0);
    op("excl.txt", O_WRONLY | O_CREAT | O_EXCL, EEXIST);
}

// ---------------------------------------------------------------------------------------------------
// Processes.

// Prints "pid <pid>" on stdout for the test, flushed so that no forked child repeats it.
static inline void print_pid(void)
{
    printf("pid %d\n", getpid());
    fflush(stdout);
}

// Waits for the child pid, which must exit with code; otherwise exit 100.
static inline void wait_exit(pid_t pid, int code)
{
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != code)
        exit(100);
}

// ---------------------------------------------------------------------------------------------------
// A raw io_uring (io_uring_setup + mmap + io_uring_enter, no liburing) that runs one operation.

struct ring {
    int fd;
    struct io_uring_params p;
    char *sq, *cq;
    struct io_uring_sqe *sqes;
};

// io_uring_setup with 4 entries, then mmap of the SQ ring, the CQ ring (unless the kernel maps both
// at once) and the SQE array. Preparation: exit 101 if any of it fails.
static inline void ring_setup(struct ring *r)
{
    memset(&r->p, 0, sizeof r->p);
    r->fd = must_setup((int)syscall(SYS_io_uring_setup, 4, &r->p), "io_uring_setup");
    int single = (r->p.features & IORING_FEAT_SINGLE_MMAP) != 0;
    size_t sq_size = r->p.sq_off.array + r->p.sq_entries * sizeof(unsigned);
    size_t cq_size = r->p.cq_off.cqes + r->p.cq_entries * sizeof(struct io_uring_cqe);
    if (single)
        sq_size = cq_size = sq_size > cq_size ? sq_size : cq_size;
    r->sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
    r->cq = single ? r->sq
                   : mmap(NULL, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
    r->sqes = mmap(NULL, r->p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
    if (r->sq == MAP_FAILED || r->cq == MAP_FAILED || r->sqes == MAP_FAILED) {
        perror("mmap");
        exit(101);
    }
}

// Submits op (copied into the ring, with user_data 42), waits for its completion with one
// io_uring_enter and returns its result. Exit 101 if io_uring_enter fails, 100 if the operation does
// (what names it).
static inline int ring_run(struct ring *r, const struct io_uring_sqe *op, const char *what)
{
    unsigned *sq_tail = (unsigned *)(r->sq + r->p.sq_off.tail);
    unsigned sq_mask = *(unsigned *)(r->sq + r->p.sq_off.ring_mask);
    unsigned *sq_array = (unsigned *)(r->sq + r->p.sq_off.array);
    unsigned tail = *sq_tail;
    unsigned idx = tail & sq_mask;
    struct io_uring_sqe *sqe = &r->sqes[idx];
    *sqe = *op;
    sqe->user_data = 42;
    sq_array[idx] = idx;
    __atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);

    must_setup(syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0), "io_uring_enter");
    unsigned *cq_head = (unsigned *)(r->cq + r->p.cq_off.head);
    unsigned cq_mask = *(unsigned *)(r->cq + r->p.cq_off.ring_mask);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(r->cq + r->p.cq_off.cqes);
    unsigned head = __atomic_load_n(cq_head, __ATOMIC_ACQUIRE);
    struct io_uring_cqe *cqe = &cqes[head & cq_mask];
    if (cqe->user_data != 42 || cqe->res < 0) {
        fprintf(stderr, "%s failed: %d\n", what, cqe->res);
        exit(100);
    }
    int res = cqe->res;
    __atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
    return res;
}

#endif
