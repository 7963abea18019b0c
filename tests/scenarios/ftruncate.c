// Scenario: ftruncate(2) names the file by its fd. To see ftruncate's own record (the open already
// makes f1 written), the file is renamed between the open and the ftruncate: the fd's file is then
// f2, so f2 is written only if ftruncate is recorded, from the kernel's path of the fd.
// argv[1]: a fresh directory; the test pre-creates f1.
//   open(f1, O_WRONLY)  -> written f1
//   rename(f1, f2)      -> renamed {f1 -> f2}
//   ftruncate(fd)       -> written f2
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
    snprintf(a, sizeof a, "%s/f1", argv[1]);
    snprintf(b, sizeof b, "%s/f2", argv[1]);
    int fd = open(a, O_WRONLY);
    if (fd < 0) {
        perror("open f1");
        return 100;
    }
    if (rename(a, b) != 0) {
        perror("rename f1 f2");
        return 100;
    }
    if (syscall(SYS_ftruncate, fd, 0) != 0) {
        perror("ftruncate");
        return 100;
    }
    close(fd);
    return 0;
}
