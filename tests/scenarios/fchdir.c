// Scenario: fchdir(2) (raw syscall) to a directory fd opened for reading (that open lists the
// directory) and to one opened O_PATH (records nothing), each followed by relative operations.
// argv[1]: a fresh directory; the test pre-creates sub/in.txt, other/ and other/gone.
//   fd = open(sub, O_RDONLY|O_DIRECTORY)     -> listed sub
//   fchdir(fd); open(in.txt)                 -> read sub/in.txt
//   fd2 = open(other, O_PATH|O_DIRECTORY)    -> nothing
//   fchdir(fd2); open(new.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written other/new.txt
//                unlink(gone)                -> removed other/gone
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/sub", argv[1]);
    int fd = open(p, O_RDONLY | O_DIRECTORY);
    snprintf(p, sizeof p, "%s/other", argv[1]);
    int fd2 = open(p, O_PATH | O_DIRECTORY);
    if (fd < 0 || fd2 < 0) {
        perror("open dirs");
        return 101;
    }
    if (syscall(SYS_fchdir, fd) != 0) {
        perror("fchdir sub");
        return 100;
    }
    int f = open("in.txt", O_RDONLY);
    if (f < 0) {
        perror("open in.txt");
        return 100;
    }
    close(f);
    if (syscall(SYS_fchdir, fd2) != 0) {
        perror("fchdir other");
        return 100;
    }
    f = open("new.txt", O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (f < 0 || unlink("gone") != 0) {
        perror("new.txt / gone");
        return 100;
    }
    close(f);
    return 0;
}
