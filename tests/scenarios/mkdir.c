// Scenario: mkdir(2) (raw syscall): a new directory, a nested one, and an existing one (EEXIST: nothing).
// argv[1]: a fresh directory; the test pre-creates exists/.
//   mkdir(m1)     -> created m1
//   mkdir(m1/m2)  -> created m1/m2
//   mkdir(exists) -> EEXIST: nothing
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/m1", argv[1]);
    if (syscall(SYS_mkdir, p, 0755) != 0) {
        perror("mkdir m1");
        return 100;
    }
    snprintf(p, sizeof p, "%s/m1/m2", argv[1]);
    if (syscall(SYS_mkdir, p, 0755) != 0) {
        perror("mkdir m1/m2");
        return 100;
    }
    snprintf(p, sizeof p, "%s/exists", argv[1]);
    if (syscall(SYS_mkdir, p, 0755) == 0 || errno != EEXIST) {
        fprintf(stderr, "mkdir exists: expected EEXIST\n");
        return 100;
    }
    return 0;
}
