// Scenario: renameat2(2) (raw syscall) with flags 0 and RENAME_NOREPLACE, succeeding and failing.
// argv[1]: a fresh directory; the test pre-creates p1, n1, k1 and k2.
//   renameat2(p1, p2, 0)                -> renamed {p1 -> p2}
//   renameat2(n1, n2, RENAME_NOREPLACE) -> renamed {n1 -> n2} (n2 did not exist)
//   renameat2(k1, k2, RENAME_NOREPLACE) -> EEXIST: nothing
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int dfd = open(argv[1], O_PATH | O_DIRECTORY);
    if (dfd < 0)
        return 101;
    if (syscall(SYS_renameat2, dfd, "p1", dfd, "p2", 0) != 0) {
        perror("renameat2 p1 p2 0");
        return 100;
    }
    if (syscall(SYS_renameat2, dfd, "n1", dfd, "n2", RENAME_NOREPLACE) != 0) {
        perror("renameat2 n1 n2 NOREPLACE");
        return 100;
    }
    if (syscall(SYS_renameat2, dfd, "k1", dfd, "k2", RENAME_NOREPLACE) == 0 || errno != EEXIST) {
        fprintf(stderr, "renameat2 k1 k2 NOREPLACE: expected EEXIST\n");
        return 100;
    }
    return 0;
}
