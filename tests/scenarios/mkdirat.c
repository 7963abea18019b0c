// Scenario: mkdirat(2) (raw syscall) relative to a dirfd, and with AT_FDCWD + an absolute path.
// argv[1]: a fresh directory; the test pre-creates sub/.
//   mkdirat(dfd, a)                 -> created a
//   mkdirat(subfd, b)               -> created sub/b
//   mkdirat(AT_FDCWD, <abs>/c)      -> created c
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
    if (syscall(SYS_mkdirat, dfd, "a", 0755) != 0 || syscall(SYS_mkdirat, subfd, "b", 0755) != 0) {
        perror("mkdirat");
        return 100;
    }
    char p[8192];
    snprintf(p, sizeof p, "%s/c", argv[1]);
    if (syscall(SYS_mkdirat, AT_FDCWD, p, 0755) != 0) {
        perror("mkdirat c");
        return 100;
    }
    return 0;
}
