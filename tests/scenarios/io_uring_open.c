// Scenario: a file opened through io_uring (IORING_OP_OPENAT), with raw io_uring_setup + mmap +
// io_uring_enter (no liburing). The open never passes through the openat system call, so the eBPF
// recorder, which sees only that an io_uring open was submitted, must mark the recording incomplete;
// strace marks any io_uring_setup incomplete.
// argv[1]: a fresh directory; the test pre-creates uring.txt.
//   IORING_OP_OPENAT(AT_FDCWD, <abs>/uring.txt, O_RDONLY) -> complete = false
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    const char *path = at("uring.txt");
    struct ring r;
    ring_setup(&r);
    struct io_uring_sqe op = {
        .opcode = IORING_OP_OPENAT,
        .fd = AT_FDCWD,
        .addr = (unsigned long)path,
        .open_flags = O_RDONLY,
    };
    close(ring_run(&r, &op, "IORING_OP_OPENAT"));
    close(r.fd);
    return 0;
}
