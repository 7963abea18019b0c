// Scenario: truncate(2) (raw syscall): of a file, through a symlink (the target is written), and of a
// missing file (ENOENT: nothing, truncate is not an open).
// argv[1]: a fresh directory; the test pre-creates t1, t2 and tl -> t2.
//   truncate(t1)      -> written t1
//   truncate(tl)      -> written t2 (truncate follows the final symlink)
//   truncate(missing) -> nothing
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/t1", argv[1]);
    if (syscall(SYS_truncate, p, 0) != 0) {
        perror("truncate t1");
        return 100;
    }
    snprintf(p, sizeof p, "%s/tl", argv[1]);
    if (syscall(SYS_truncate, p, 1) != 0) {
        perror("truncate tl");
        return 100;
    }
    snprintf(p, sizeof p, "%s/missing", argv[1]);
    if (syscall(SYS_truncate, p, 0) == 0 || errno != ENOENT) {
        fprintf(stderr, "truncate missing: expected ENOENT\n");
        return 100;
    }
    return 0;
}
