// Scenario: a file opened through io_uring (IORING_OP_OPENAT), with raw io_uring_setup + mmap +
// io_uring_enter (no liburing). The open never passes through the openat system call, so the eBPF
// recorder, which sees only that an io_uring open was submitted, must mark the recording incomplete;
// strace marks any io_uring_setup incomplete.
// argv[1]: a fresh directory; the test pre-creates uring.txt.
//   IORING_OP_OPENAT(AT_FDCWD, <abs>/uring.txt, O_RDONLY) -> complete = false
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    static char path[8192];
    snprintf(path, sizeof path, "%s/uring.txt", argv[1]);

    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    int ring = (int)syscall(SYS_io_uring_setup, 4, &p);
    if (ring < 0) {
        perror("io_uring_setup");
        return 101;
    }
    size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (p.features & IORING_FEAT_SINGLE_MMAP)
        sq_size = cq_size = sq_size > cq_size ? sq_size : cq_size;
    char *sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
    char *cq = (p.features & IORING_FEAT_SINGLE_MMAP)
                   ? sq
                   : mmap(NULL, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                                     MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
        perror("mmap");
        return 101;
    }

    unsigned *sq_tail = (unsigned *)(sq + p.sq_off.tail);
    unsigned sq_mask = *(unsigned *)(sq + p.sq_off.ring_mask);
    unsigned *sq_array = (unsigned *)(sq + p.sq_off.array);
    unsigned tail = *sq_tail;
    unsigned idx = tail & sq_mask;
    struct io_uring_sqe *sqe = &sqes[idx];
    memset(sqe, 0, sizeof *sqe);
    sqe->opcode = IORING_OP_OPENAT;
    sqe->fd = AT_FDCWD;
    sqe->addr = (unsigned long)path;
    sqe->open_flags = O_RDONLY;
    sqe->user_data = 42;
    sq_array[idx] = idx;
    __atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);

    if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
        perror("io_uring_enter");
        return 101;
    }
    unsigned *cq_head = (unsigned *)(cq + p.cq_off.head);
    unsigned cq_mask = *(unsigned *)(cq + p.cq_off.ring_mask);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    unsigned head = __atomic_load_n(cq_head, __ATOMIC_ACQUIRE);
    struct io_uring_cqe *cqe = &cqes[head & cq_mask];
    if (cqe->user_data != 42 || cqe->res < 0) {
        fprintf(stderr, "IORING_OP_OPENAT failed: %d\n", cqe->res);
        return 100;
    }
    __atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
    close(cqe->res);
    close(ring);
    return 0;
}
