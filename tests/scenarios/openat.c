// Scenario: openat(2), with each intent: relative to a directory fd (opened O_PATH, which records
// nothing), and one absolute path with AT_FDCWD.
// argv[1]: a fresh directory; the test pre-creates r.txt w.txt rw.txt t.txt rt.txt exists.txt excl.txt
// and abs.txt.
//   r.txt       O_RDONLY                    -> read
//   w.txt       O_WRONLY                    -> written
//   rw.txt      O_RDWR                      -> read, written
//   t.txt       O_WRONLY|O_TRUNC            -> written
//   rt.txt      O_RDONLY|O_TRUNC            -> read, written
//   c.txt       O_WRONLY|O_CREAT (new)      -> created, written
//   exists.txt  O_WRONLY|O_CREAT (existing) -> written only
//   x.txt       O_WRONLY|O_CREAT|O_EXCL     -> created, written
//   excl.txt    O_WRONLY|O_CREAT|O_EXCL     -> fails with EEXIST: nothing
//   abs.txt     AT_FDCWD, absolute, O_RDONLY -> read
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int dirfd;

static void do_openat(int fd_base, const char *path, int flags, int expect_errno)
{
    long fd = syscall(SYS_openat, fd_base, path, flags, 0644);
    if (expect_errno ? (fd >= 0 || errno != expect_errno) : fd < 0) {
        fprintf(stderr, "openat(%s, %#x) = %ld: %s\n", path, flags, fd, strerror(errno));
        exit(100);
    }
    if (fd >= 0)
        close((int)fd);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    dirfd = open(argv[1], O_PATH | O_DIRECTORY);
    if (dirfd < 0)
        return 101;
    do_openat(dirfd, "r.txt", O_RDONLY, 0);
    do_openat(dirfd, "w.txt", O_WRONLY, 0);
    do_openat(dirfd, "rw.txt", O_RDWR, 0);
    do_openat(dirfd, "t.txt", O_WRONLY | O_TRUNC, 0);
    do_openat(dirfd, "rt.txt", O_RDONLY | O_TRUNC, 0);
    do_openat(dirfd, "c.txt", O_WRONLY | O_CREAT, 0);
    do_openat(dirfd, "exists.txt", O_WRONLY | O_CREAT, 0);
    do_openat(dirfd, "x.txt", O_WRONLY | O_CREAT | O_EXCL, 0);
    do_openat(dirfd, "excl.txt", O_WRONLY | O_CREAT | O_EXCL, EEXIST);
    char abs[8192];
    snprintf(abs, sizeof abs, "%s/abs.txt", argv[1]);
    do_openat(AT_FDCWD, abs, O_RDONLY, 0);
    return 0;
}
