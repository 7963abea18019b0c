// Scenario: symlinkat(2) (raw syscall) relative to a dirfd and with AT_FDCWD + an absolute path.
// argv[1]: a fresh directory; the test pre-creates src and sub/.
//   symlinkat("../src", subfd, s3)       -> created sub/s3
//   symlinkat("src", AT_FDCWD, <abs>/s4) -> created s4
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
    int subfd = dfd < 0 ? -1 : openat(dfd, "sub", O_PATH | O_DIRECTORY);
    if (subfd < 0)
        return 101;
    if (syscall(SYS_symlinkat, "../src", subfd, "s3") != 0) {
        perror("symlinkat sub/s3");
        return 100;
    }
    char p[8192];
    snprintf(p, sizeof p, "%s/s4", argv[1]);
    if (syscall(SYS_symlinkat, "src", AT_FDCWD, p) != 0) {
        perror("symlinkat s4");
        return 100;
    }
    return 0;
}
