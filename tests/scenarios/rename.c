// Scenario: rename(2) (raw syscall) of a file and of a directory; a failed rename records nothing.
// argv[1]: a fresh directory; the test pre-creates a.txt and dir1/inner.txt.
//   rename(a.txt, b.txt)         -> renamed {a.txt -> b.txt}
//   rename(dir1, dir2)           -> renamed {dir1 -> dir2} (dir1/inner.txt is not touched)
//   rename(missing.txt, z.txt)   -> ENOENT: nothing (rename is not an open: no probe)
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    dir = argv[1];
    if (syscall(SYS_rename, at("a.txt"), at("b.txt")) != 0) {
        perror("rename a.txt b.txt");
        return 100;
    }
    if (syscall(SYS_rename, at("dir1"), at("dir2")) != 0) {
        perror("rename dir1 dir2");
        return 100;
    }
    if (syscall(SYS_rename, at("missing.txt"), at("z.txt")) == 0 || errno != ENOENT) {
        fprintf(stderr, "rename missing.txt: expected ENOENT\n");
        return 100;
    }
    return 0;
}
