// Scenario: io_uring used only for IORING_OP_NOP (raw io_uring_setup + mmap + io_uring_enter, no
// liburing), and a plain open. A ring that does no file operation leaves the eBPF recording complete;
// strace cannot see what a ring does, so under strace any io_uring_setup makes it incomplete (a named
// difference in the tests).
// argv[1]: a fresh directory; the test pre-creates plain.txt.
//   IORING_OP_NOP                  -> nothing (eBPF: still complete)
//   open(plain.txt, O_RDONLY)      -> read plain.txt
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    const char *path = at("plain.txt");
    struct ring r;
    ring_setup(&r);
    struct io_uring_sqe nop = {.opcode = IORING_OP_NOP};
    ring_run(&r, &nop, "IORING_OP_NOP");
    close(r.fd);
    open_close(path, O_RDONLY);
    return 0;
}
