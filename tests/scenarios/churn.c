// Scenario: steady file activity over time, for the concurrency test (two traced commands and one
// untraced one running at once must each see only their own files). Creates and reads back N files,
// pausing between them.
// argv[1]: a fresh directory; argv[2]: N (default 20); argv[3]: pause in ms (default 50).
//   for i < N: open(f<i>.txt, O_CREAT|O_EXCL|O_WRONLY), open(f<i>.txt, O_RDONLY)
//              -> created, written, read f0.txt .. f<N-1>.txt
#include "scenario.h"
#include <time.h>

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 20;
    long ms = argc > 3 ? strtol(argv[3], NULL, 10) : 50;
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    char p[8192];
    for (long i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/f%ld.txt", scenario_dir, i);
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || write(fd, "x\n", 2) != 2) {
            perror(p);
            return 100;
        }
        close(fd);
        open_close(p, O_RDONLY);
        nanosleep(&pause, NULL);
    }
    return 0;
}
