// Scenario: a crashing command: it writes a file, then dereferences a null pointer (SIGSEGV, so
// qk-trace exits 128 + 11 = 139). Core dumps are switched off so no core file appears.
// argv[1]: a fresh directory.
//   open(before.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written before.txt
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    char p[8192];
    snprintf(p, sizeof p, "%s/before.txt", argv[1]);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return 100;
    close(fd);
    volatile uintptr_t address = 0;  // volatile: the compiler cannot see the null and turn it into a trap
    *(volatile int *)address = 1;
    return 100;
}
