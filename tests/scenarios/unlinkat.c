// Scenario: unlinkat(2) (raw syscall) of a file relative to a dirfd, of a directory with
// AT_REMOVEDIR, and of an absolute path with AT_FDCWD.
// argv[1]: a fresh directory; the test pre-creates f, d/ (empty) and g.
//   unlinkat(dfd, f, 0)            -> removed f
//   unlinkat(dfd, d, AT_REMOVEDIR) -> removed d
//   unlinkat(AT_FDCWD, <abs>/g, 0) -> removed g
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int dfd = open(argv[1], O_PATH | O_DIRECTORY);
    if (dfd < 0)
        return 101;
    if (syscall(SYS_unlinkat, dfd, "f", 0) != 0) {
        perror("unlinkat f");
        return 100;
    }
    if (syscall(SYS_unlinkat, dfd, "d", AT_REMOVEDIR) != 0) {
        perror("unlinkat d AT_REMOVEDIR");
        return 100;
    }
    char p[8192];
    snprintf(p, sizeof p, "%s/g", argv[1]);
    if (syscall(SYS_unlinkat, AT_FDCWD, p, 0) != 0) {
        perror("unlinkat g");
        return 100;
    }
    return 0;
}
