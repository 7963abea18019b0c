// Scenario: a burst of opens, for the ring-buffer loss test. Opens (and closes) burst.txt N times with
// O_RDONLY. With a tiny ring buffer the eBPF recorder must drop events and say so.
// argv[1]: a fresh directory; the test pre-creates burst.txt. argv[2]: N (default 1000).
//   N x openat(AT_FDCWD, burst.txt, O_RDONLY) -> read burst.txt
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
    char p[8192];
    snprintf(p, sizeof p, "%s/burst.txt", argv[1]);
    for (long i = 0; i < n; i++) {
        long fd = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY);
        if (fd < 0) {
            perror(p);
            return 100;
        }
        close((int)fd);
    }
    return 0;
}
