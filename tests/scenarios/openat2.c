// Scenario: openat2(2) (raw syscall, glibc 2.36 has no wrapper), with each intent, relative to a
// directory fd; plus RESOLVE_NO_SYMLINKS refusing a symlink (ELOOP: a failure other than ENOENT
// records nothing) and RESOLVE_BENEATH refusing "..".
// argv[1]: a fresh directory; the test pre-creates r.txt w.txt rw.txt t.txt rt.txt exists.txt excl.txt,
// and link.txt -> r.txt.
//   r.txt       O_RDONLY                    -> read
//   w.txt       O_WRONLY                    -> written
//   rw.txt      O_RDWR                      -> read, written
//   t.txt       O_WRONLY|O_TRUNC            -> written
//   rt.txt      O_RDONLY|O_TRUNC            -> read, written
//   c.txt       O_WRONLY|O_CREAT (new)      -> created, written
//   exists.txt  O_WRONLY|O_CREAT (existing) -> written only
//   x.txt       O_WRONLY|O_CREAT|O_EXCL     -> created, written
//   excl.txt    O_WRONLY|O_CREAT|O_EXCL     -> fails with EEXIST: nothing
//   link.txt    O_RDONLY, RESOLVE_NO_SYMLINKS -> fails with ELOOP: nothing
//   ../x        O_RDONLY, RESOLVE_BENEATH   -> fails with EXDEV: nothing
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int dirfd;

static void do_openat2(const char *rel, int flags, unsigned long long resolve, int expect_errno)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)flags;
    how.mode = (flags & O_CREAT) ? 0644 : 0;  // openat2 rejects a mode without O_CREAT
    how.resolve = resolve;
    long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    if (expect_errno ? (fd >= 0 || errno != expect_errno) : fd < 0) {
        fprintf(stderr, "openat2(%s, %#x) = %ld: %s\n", rel, flags, fd, strerror(errno));
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
    do_openat2("r.txt", O_RDONLY, 0, 0);
    do_openat2("w.txt", O_WRONLY, 0, 0);
    do_openat2("rw.txt", O_RDWR, 0, 0);
    do_openat2("t.txt", O_WRONLY | O_TRUNC, 0, 0);
    do_openat2("rt.txt", O_RDONLY | O_TRUNC, 0, 0);
    do_openat2("c.txt", O_WRONLY | O_CREAT, 0, 0);
    do_openat2("exists.txt", O_WRONLY | O_CREAT, 0, 0);
    do_openat2("x.txt", O_WRONLY | O_CREAT | O_EXCL, 0, 0);
    do_openat2("excl.txt", O_WRONLY | O_CREAT | O_EXCL, 0, EEXIST);
    do_openat2("link.txt", O_RDONLY, RESOLVE_NO_SYMLINKS, ELOOP);
    do_openat2("../outside.txt", O_RDONLY, RESOLVE_BENEATH, EXDEV);
    return 0;
}
