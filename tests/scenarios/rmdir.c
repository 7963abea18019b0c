// Scenario: rmdir(2) (raw syscall) of an empty directory, and of a non-empty one (ENOTEMPTY: nothing).
// argv[1]: a fresh directory; the test pre-creates empty/ and full/file.
//   rmdir(empty) -> removed empty
//   rmdir(full)  -> ENOTEMPTY: nothing
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
    snprintf(p, sizeof p, "%s/empty", argv[1]);
    if (syscall(SYS_rmdir, p) != 0) {
        perror("rmdir empty");
        return 100;
    }
    snprintf(p, sizeof p, "%s/full", argv[1]);
    if (syscall(SYS_rmdir, p) == 0 || errno != ENOTEMPTY) {
        fprintf(stderr, "rmdir full: expected ENOTEMPTY\n");
        return 100;
    }
    return 0;
}
