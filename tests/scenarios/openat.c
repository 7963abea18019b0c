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
#include "scenario.h"

static int dfd;

static void do_openat(const char *rel, int flags, int expect_errno)
{
    opened(syscall(SYS_openat, dfd, rel, flags, 0644), expect_errno, rel);
}

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    dfd = dir_fd(AT_FDCWD, scenario_dir);
    open_each_intent(do_openat);
    opened(syscall(SYS_openat, AT_FDCWD, at("abs.txt"), O_RDONLY, 0644), 0, "abs.txt");
    return 0;
}
