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
#include "scenario.h"

static void do_open(const char *rel, int flags, int expect_errno)
{
    opened(syscall(SYS_open, at(rel), flags, 0644), expect_errno, rel);
}

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    open_each_intent(do_open);
    return 0;
}
