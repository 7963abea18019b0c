// Scenario: every kind of operation relative to one directory fd (opened O_PATH), including ".." and
// nested names.
// argv[1]: a fresh directory; the test pre-creates sub/a.txt, sub/nested/c.txt, sub/gone.txt, sub/r1
// and b.txt.
//   openat(dfd, a.txt, O_RDONLY)        -> read sub/a.txt
//   openat(dfd, ../b.txt, O_WRONLY)     -> written b.txt
//   openat(dfd, nested/c.txt, O_RDONLY) -> read sub/nested/c.txt
//   openat(dfd, missing.txt, O_RDONLY)  -> probed sub/missing.txt
//   mkdirat(dfd, newdir)                -> created sub/newdir
//   unlinkat(dfd, gone.txt)             -> removed sub/gone.txt
//   renameat(dfd, r1, dfd, r2)          -> renamed {sub/r1 -> sub/r2}
//   symlinkat(a.txt, dfd, sl)           -> created sub/sl
//   linkat(dfd, a.txt, dfd, hl)         -> created sub/hl
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int dfd;

static void op(const char *rel, int flags, int expect_errno)
{
    long fd = syscall(SYS_openat, dfd, rel, flags, 0644);
    if (expect_errno ? (fd >= 0 || errno != expect_errno) : fd < 0) {
        perror(rel);
        exit(100);
    }
    if (fd >= 0)
        close((int)fd);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/sub", argv[1]);
    dfd = open(p, O_PATH | O_DIRECTORY);
    if (dfd < 0)
        return 101;
    op("a.txt", O_RDONLY, 0);
    op("../b.txt", O_WRONLY, 0);
    op("nested/c.txt", O_RDONLY, 0);
    op("missing.txt", O_RDONLY, ENOENT);
    if (syscall(SYS_mkdirat, dfd, "newdir", 0755) != 0 || syscall(SYS_unlinkat, dfd, "gone.txt", 0) != 0 ||
        syscall(SYS_renameat, dfd, "r1", dfd, "r2") != 0 || syscall(SYS_symlinkat, "a.txt", dfd, "sl") != 0 ||
        syscall(SYS_linkat, dfd, "a.txt", dfd, "hl", 0) != 0) {
        perror("mkdirat/unlinkat/renameat/symlinkat/linkat");
        return 100;
    }
    return 0;
}
