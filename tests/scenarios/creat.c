// Scenario: creat(2) (raw syscall), which is open(O_WRONLY|O_CREAT|O_TRUNC).
// argv[1]: a fresh directory; the test pre-creates exists.txt.
//   new.txt     (does not exist) -> created, written
//   exists.txt  (exists)         -> written (truncated), not created
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char path[8192];
    snprintf(path, sizeof path, "%s/new.txt", argv[1]);
    long fd = syscall(SYS_creat, path, 0644);
    if (fd < 0) {
        perror("creat new.txt");
        return 100;
    }
    close((int)fd);
    snprintf(path, sizeof path, "%s/exists.txt", argv[1]);
    fd = syscall(SYS_creat, path, 0644);
    if (fd < 0) {
        perror("creat exists.txt");
        return 100;
    }
    close((int)fd);
    return 0;
}
