// Scenario: a symlinked directory on the path. Every recorded path is canonical: it names the real
// directory, never the link.
// argv[1]: a fresh directory; the test pre-creates real/f, real/u, real/r1 and link -> real.
//   open(link/f, O_RDONLY)                  -> read real/f
//   open(link/new, O_CREAT|O_EXCL|O_WRONLY) -> created, written real/new
//   mkdir(link/md)                          -> created real/md
//   unlink(link/u)                          -> removed real/u
//   rename(link/r1, link/r2)                -> renamed {real/r1 -> real/r2}
//   open(link/missing, O_RDONLY)            -> probed real/missing
//   open(link, O_RDONLY|O_DIRECTORY)        -> listed real
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

static void op(const char *rel, int flags, int expect_errno)
{
    int fd = open(at(rel), flags, 0644);
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
    op("link/f", O_RDONLY, 0);
    op("link/new", O_WRONLY | O_CREAT | O_EXCL, 0);
    if (mkdir(at("link/md"), 0755) != 0 || unlink(at("link/u")) != 0 || rename(at("link/r1"), at("link/r2")) != 0) {
        perror("mkdir/unlink/rename");
        return 100;
    }
    op("link/missing", O_RDONLY, ENOENT);
    op("link", O_RDONLY | O_DIRECTORY, 0);
    return 0;
}
