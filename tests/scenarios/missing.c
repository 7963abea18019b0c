// Scenario: opens of files that do not exist are probes (ENOENT), also under a missing directory and
// relative to a dirfd. A probe followed by the file's creation is both probed and created. stat and
// access of a missing file are not opens: nothing.
// argv[1]: a fresh directory.
//   open(missing.txt, O_RDONLY)                -> probed missing.txt
//   openat(dfd, missing2.txt, O_RDONLY)        -> probed missing2.txt
//   open(nodir/x, O_RDONLY)                    -> probed nodir/x
//   stat(statted), access(accessed)            -> nothing
//   open(later, O_RDONLY); open(later, O_CREAT|O_EXCL|O_WRONLY) -> probed, created, written later
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *dir;
static const char *at(const char *rel)
{
    static char bufs[4][8192];
    static int n;
    char *b = bufs[n++ & 3];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, rel);
    return b;
}

static void expect_enoent(int fd, const char *what)
{
    if (fd >= 0 || errno != ENOENT) {
        fprintf(stderr, "%s: expected ENOENT\n", what);
        exit(100);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    dir = argv[1];
    int dfd = open(dir, O_PATH | O_DIRECTORY);
    if (dfd < 0)
        return 101;
    expect_enoent(open(at("missing.txt"), O_RDONLY), "missing.txt");
    expect_enoent(openat(dfd, "missing2.txt", O_RDONLY), "missing2.txt");
    expect_enoent(open(at("nodir/x"), O_RDONLY), "nodir/x");
    struct stat st;
    expect_enoent(stat(at("statted"), &st), "stat");
    expect_enoent(access(at("accessed"), R_OK), "access");
    expect_enoent(open(at("later"), O_RDONLY), "later");
    int fd = open(at("later"), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return 100;
    close(fd);
    return 0;
}
