// Scenario: linkat(2) (raw syscall) relative to dirfds; with AT_SYMLINK_FOLLOW through a symlink
// (the new name links the target), and without it (the new name links the symlink itself).
// argv[1]: a fresh directory; the test pre-creates src, sub/ and sl -> src.
//   linkat(dfd, src, subfd, l2, 0)                -> created sub/l2
//   linkat(dfd, sl, dfd, l3, AT_SYMLINK_FOLLOW)   -> created l3
//   linkat(dfd, sl, dfd, l4, 0)                   -> created l4
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int dfd = open(argv[1], O_PATH | O_DIRECTORY);
    int subfd = openat(dfd, "sub", O_PATH | O_DIRECTORY);
    if (dfd < 0 || subfd < 0)
        return 101;
    if (syscall(SYS_linkat, dfd, "src", subfd, "l2", 0) != 0) {
        perror("linkat src sub/l2");
        return 100;
    }
    if (syscall(SYS_linkat, dfd, "sl", dfd, "l3", AT_SYMLINK_FOLLOW) != 0) {
        perror("linkat sl l3 AT_SYMLINK_FOLLOW");
        return 100;
    }
    if (syscall(SYS_linkat, dfd, "sl", dfd, "l4", 0) != 0) {
        perror("linkat sl l4");
        return 100;
    }
    return 0;
}
