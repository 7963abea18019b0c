// Scenario: unlink(2) (raw syscall) of a file, of a symlink (the link is removed, not its target),
// and of a missing file (ENOENT: nothing, unlink is not an open).
// argv[1]: a fresh directory; the test pre-creates f1, f2 and sl -> f2.
//   unlink(f1)      -> removed f1
//   unlink(sl)      -> removed sl (f2 untouched)
//   unlink(missing) -> nothing
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
    snprintf(p, sizeof p, "%s/f1", argv[1]);
    if (syscall(SYS_unlink, p) != 0) {
        perror("unlink f1");
        return 100;
    }
    snprintf(p, sizeof p, "%s/sl", argv[1]);
    if (syscall(SYS_unlink, p) != 0) {
        perror("unlink sl");
        return 100;
    }
    snprintf(p, sizeof p, "%s/missing", argv[1]);
    if (syscall(SYS_unlink, p) == 0 || errno != ENOENT) {
        fprintf(stderr, "unlink missing: expected ENOENT\n");
        return 100;
    }
    return 0;
}
