// Scenario: renameat2(2) with RENAME_EXCHANGE: both names stay, their contents swap, so the
// recording holds both directions. Also a directory exchanged with a file.
// argv[1]: a fresh directory; the test pre-creates x.txt, y.txt, dirx/ and filey.
//   renameat2(x.txt, y.txt, RENAME_EXCHANGE) -> renamed {x.txt -> y.txt} and {y.txt -> x.txt}
//   renameat2(dirx, filey, RENAME_EXCHANGE)  -> renamed {dirx -> filey} and {filey -> dirx}
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int dfd = open(argv[1], O_PATH | O_DIRECTORY);
    if (dfd < 0)
        return 101;
    if (syscall(SYS_renameat2, dfd, "x.txt", dfd, "y.txt", RENAME_EXCHANGE) != 0) {
        perror("renameat2 x.txt y.txt EXCHANGE");
        return 100;
    }
    if (syscall(SYS_renameat2, dfd, "dirx", dfd, "filey", RENAME_EXCHANGE) != 0) {
        perror("renameat2 dirx filey EXCHANGE");
        return 100;
    }
    return 0;
}
