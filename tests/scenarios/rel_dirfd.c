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
#include "scenario.h"

static int dfd;

static void op(const char *rel, int flags, int expect_errno)
{
    opened(syscall(SYS_openat, dfd, rel, flags, 0644), expect_errno, rel);
}

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    dfd = dir_fd(AT_FDCWD, at("sub"));
    op("a.txt", O_RDONLY, 0);
    op("../b.txt", O_WRONLY, 0);
    op("nested/c.txt", O_RDONLY, 0);
    op("missing.txt", O_RDONLY, ENOENT);
    must(syscall(SYS_mkdirat, dfd, "newdir", 0755), "mkdirat newdir");
    must(syscall(SYS_unlinkat, dfd, "gone.txt", 0), "unlinkat gone.txt");
    must(syscall(SYS_renameat, dfd, "r1", dfd, "r2"), "renameat r1 r2");
    must(syscall(SYS_symlinkat, "a.txt", dfd, "sl"), "symlinkat sl");
    must(syscall(SYS_linkat, dfd, "a.txt", dfd, "hl", 0), "linkat hl");
    return 0;
}
