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
#include "scenario.h"
#include <linux/openat2.h>

static int dfd;

static void do_openat2(const char *rel, int flags, unsigned long long resolve, int expect_errno)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)flags;
    how.mode = (flags & O_CREAT) ? 0644 : 0;  // openat2 rejects a mode without O_CREAT
    how.resolve = resolve;
    opened(syscall(SYS_openat2, dfd, rel, &how, sizeof how), expect_errno, rel);
}

static void do_plain_openat2(const char *rel, int flags, int expect_errno)
{
    do_openat2(rel, flags, 0, expect_errno);
}

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    dfd = dir_fd(AT_FDCWD, scenario_dir);
    open_each_intent(do_plain_openat2);
    do_openat2("link.txt", O_RDONLY, RESOLVE_NO_SYMLINKS, ELOOP);
    do_openat2("../outside.txt", O_RDONLY, RESOLVE_BENEATH, EXDEV);
    return 0;
}
