// Scenario: the open(2) system call itself (raw syscall: glibc's open() calls openat), with each intent.
// argv[1]: a fresh directory; the test pre-creates r.txt w.txt rw.txt t.txt rt.txt exists.txt excl.txt.
//   r.txt       O_RDONLY                    -> read
//   w.txt       O_WRONLY                    -> written
//   rw.txt      O_RDWR                      -> read, written
//   t.txt       O_WRONLY|O_TRUNC            -> written
//   rt.txt      O_RDONLY|O_TRUNC            -> read, written (O_TRUNC truncates even a read-only open)
//   c.txt       O_WRONLY|O_CREAT (new)      -> created, written
//   exists.txt  O_WRONLY|O_CREAT (existing) -> written only: nothing was created
//   x.txt       O_WRONLY|O_CREAT|O_EXCL     -> created, written
//   excl.txt    O_WRONLY|O_CREAT|O_EXCL     -> fails with EEXIST: nothing
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *dir;
static const char *at(const char *rel)
{
    static char bufs[4][8192];
    static int n;
    char *b = bufs[n++ & 3];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, rel);
    return b;
}

static void do_open(const char *rel, int flags, int expect_errno)
{
    long fd = syscall(SYS_open, at(rel), flags, 0644);
    if (expect_errno ? (fd >= 0 || errno != expect_errno) : fd < 0) {
        fprintf(stderr, "open(%s, %#x) = %ld: %s\n", rel, flags, fd, strerror(errno));
        exit(100);
    }
    if (fd >= 0)
        close((int)fd);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    dir = argv[1];
    do_open("r.txt", O_RDONLY, 0);
    do_open("w.txt", O_WRONLY, 0);
    do_open("rw.txt", O_RDWR, 0);
    do_open("t.txt", O_WRONLY | O_TRUNC, 0);
    do_open("rt.txt", O_RDONLY | O_TRUNC, 0);
    do_open("c.txt", O_WRONLY | O_CREAT, 0);
    do_open("exists.txt", O_WRONLY | O_CREAT, 0);
    do_open("x.txt", O_WRONLY | O_CREAT | O_EXCL, 0);
    do_open("excl.txt", O_WRONLY | O_CREAT | O_EXCL, EEXIST);
    return 0;
}
