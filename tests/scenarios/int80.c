// Scenario: a 32-bit system call from a 64-bit program (`int $0x80`, the i386 entry), opening a file.
// The kernel runs it as the compat open(2); the 64-bit syscall tracepoints do not see it. A recorder
// must either decode it (the file is read) or mark the recording incomplete: never report complete
// without the file.
// argv[1]: a fresh directory; the test pre-creates int80.txt.
//   int $0x80: open(<abs>/int80.txt, O_RDONLY) (i386 __NR_open = 5) -> read int80.txt, or incomplete
// Exits 3 when the kernel has no 32-bit entry (no IA32_EMULATION, or it is turned off, as in confidential
// and some microVM guests, where `int $0x80` faults with SIGSEGV): the test then skips.
#include "scenario.h"

#include <signal.h>
#include <unistd.h>

// The fault is the kernel refusing the entry: no system call was made, so there is nothing to record.
static void no_entry(int sig)
{
    (void)sig;
    static const char msg[] = "no 32-bit syscall entry here (int $0x80 faulted)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    // The i386 ABI passes 32-bit pointers: the path must live below 4 GiB.
    char *low = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED) {
        perror("mmap MAP_32BIT");
        return 101;
    }
    snprintf(low, 16384, "%s/int80.txt", scenario_dir);
    struct sigaction sa = {0};
    sa.sa_handler = no_entry;
    sigaction(SIGSEGV, &sa, NULL);
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(5L), "b"((long)(unsigned long)low), "c"((long)O_RDONLY), "d"(0L)
                     : "memory", "r8", "r9", "r10", "r11");
    if (ret == -38 /* ENOSYS */ || ret == -14 /* EFAULT */) {
        fprintf(stderr, "no 32-bit syscall entry here (%ld)\n", ret);
        return 3;
    }
    if (ret < 0) {
        fprintf(stderr, "32-bit open: %s\n", strerror((int)-ret));
        return 100;
    }
    close((int)ret);
    return 0;
}
