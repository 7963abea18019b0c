// Scenario: opens through a symlink to a file: the final symlink is followed, so the recorded path is
// the target's. O_NOFOLLOW on the link fails (ELOOP: nothing). An O_CREAT open through a dangling
// symlink creates its target.
// argv[1]: a fresh directory; the test pre-creates target.txt, ln -> target.txt, sub/t2.txt,
// ln2 -> sub/t2.txt (a relative link into a subdirectory) and dangle -> made-by-link.txt.
//   open(ln, O_RDONLY)              -> read target.txt
//   open(ln2, O_WRONLY)             -> written sub/t2.txt
//   open(ln, O_RDONLY|O_NOFOLLOW)   -> ELOOP: nothing
//   open(dangle, O_WRONLY|O_CREAT)  -> created, written made-by-link.txt
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *dir;

static void op(const char *rel, int flags, int expect_errno)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    int fd = open(p, flags, 0644);
    if (expect_errno ? (fd >= 0 || errno != expect_errno) : fd < 0) {
        perror(rel);
        exit(100);
    }
    if (fd >= 0)
        close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    dir = argv[1];
    op("ln", O_RDONLY, 0);
    op("ln2", O_WRONLY, 0);
    op("ln", O_RDONLY | O_NOFOLLOW, ELOOP);
    op("dangle", O_WRONLY | O_CREAT, 0);
    return 0;
}
