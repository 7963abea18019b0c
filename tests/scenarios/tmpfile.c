// Scenario: O_TMPFILE. Opening an unnamed file in a directory records nothing (not even a listing of
// the directory); giving it a name with linkat creates that name. Both ways of naming it:
// AT_EMPTY_PATH on the fd (needs CAP_DAC_READ_SEARCH; the tests run as root) and /proc/self/fd/N
// with AT_SYMLINK_FOLLOW.
// argv[1]: a fresh directory.
//   fd = open(dir, O_TMPFILE|O_WRONLY); linkat(fd, "", AT_FDCWD, named, AT_EMPTY_PATH)     -> created named
//   fd = open(dir, O_TMPFILE|O_RDWR); linkat(AT_FDCWD, /proc/self/fd/N, AT_FDCWD, named2,
//                                            AT_SYMLINK_FOLLOW)                          -> created named2
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192], proc[64];
    int fd = open(argv[1], O_TMPFILE | O_WRONLY, 0600);
    if (fd < 0 || write(fd, "x", 1) != 1) {
        perror("O_TMPFILE 1");
        return 101;
    }
    snprintf(p, sizeof p, "%s/named", argv[1]);
    if (linkat(fd, "", AT_FDCWD, p, AT_EMPTY_PATH) != 0) {
        perror("linkat AT_EMPTY_PATH");
        return 100;
    }
    close(fd);
    fd = open(argv[1], O_TMPFILE | O_RDWR, 0600);
    if (fd < 0) {
        perror("O_TMPFILE 2");
        return 101;
    }
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    snprintf(p, sizeof p, "%s/named2", argv[1]);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, p, AT_SYMLINK_FOLLOW) != 0) {
        perror("linkat /proc/self/fd");
        return 100;
    }
    close(fd);
    return 0;
}
