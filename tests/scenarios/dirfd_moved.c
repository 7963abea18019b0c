// Scenario: a directory fd whose directory is renamed after it was opened. Operations relative to the
// fd happen in the directory's new place: the recorder must resolve the dirfd as the kernel does now,
// not by the name it was opened with.
// argv[1]: a fresh directory; the test pre-creates sub/a.txt.
//   dfd = open(sub, O_PATH)         -> nothing
//   rename(sub, moved)              -> renamed {sub -> moved}
//   openat(dfd, a.txt, O_RDONLY)    -> read moved/a.txt
//   mkdirat(dfd, m)                 -> created moved/m
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char a[8192], b[8192];
    snprintf(a, sizeof a, "%s/sub", argv[1]);
    snprintf(b, sizeof b, "%s/moved", argv[1]);
    int dfd = open(a, O_PATH | O_DIRECTORY);
    if (dfd < 0)
        return 101;
    if (rename(a, b) != 0) {
        perror("rename sub moved");
        return 100;
    }
    int fd = openat(dfd, "a.txt", O_RDONLY);
    if (fd < 0 || syscall(SYS_mkdirat, dfd, "m", 0755) != 0) {
        perror("openat/mkdirat");
        return 100;
    }
    close(fd);
    return 0;
}
