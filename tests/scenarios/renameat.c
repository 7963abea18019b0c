// Scenario: renameat(2) (raw syscall): relative to directory fds, and mixing AT_FDCWD + absolute.
// argv[1]: a fresh directory; the test pre-creates a.txt, b.txt and sub/.
//   renameat(dfd, a.txt, subfd, a2.txt)          -> renamed {a.txt -> sub/a2.txt}
//   renameat(AT_FDCWD, <abs>/b.txt, dfd, b2.txt) -> renamed {b.txt -> b2.txt}
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
    if (dfd < 0 || subfd < 0) {
        perror("open dirs");
        return 101;
    }
    if (syscall(SYS_renameat, dfd, "a.txt", subfd, "a2.txt") != 0) {
        perror("renameat a.txt");
        return 100;
    }
    char abs[8192];
    snprintf(abs, sizeof abs, "%s/b.txt", argv[1]);
    if (syscall(SYS_renameat, AT_FDCWD, abs, dfd, "b2.txt") != 0) {
        perror("renameat b.txt");
        return 100;
    }
    return 0;
}
