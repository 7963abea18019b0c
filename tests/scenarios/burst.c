// Scenario: a burst of opens, for the ring-buffer loss test. Opens (and closes) burst.txt N times with
// O_RDONLY. With a tiny ring buffer the eBPF recorder must drop events and say so.
// argv[1]: a fresh directory; the test pre-creates burst.txt. argv[2]: N (default 1000).
//   N x openat(AT_FDCWD, burst.txt, O_RDONLY) -> read burst.txt
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
    const char *p = at("burst.txt");
    for (long i = 0; i < n; i++)
        opened(syscall(SYS_openat, AT_FDCWD, p, O_RDONLY), 0, p);
    return 0;
}
