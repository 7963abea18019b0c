// Scenario: symlink(2) (raw syscall): the link path is created; its target is not touched (it may not
// even exist). A symlink onto an existing name fails (EEXIST): nothing.
// argv[1]: a fresh directory; the test pre-creates src and taken.
//   symlink("src", s1)                 -> created s1
//   symlink("/nonexistent/target", s2) -> created s2 (dangling)
//   symlink("src", taken)              -> EEXIST: nothing
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
    snprintf(p, sizeof p, "%s/s1", argv[1]);
    if (syscall(SYS_symlink, "src", p) != 0) {
        perror("symlink s1");
        return 100;
    }
    snprintf(p, sizeof p, "%s/s2", argv[1]);
    if (syscall(SYS_symlink, "/nonexistent/target", p) != 0) {
        perror("symlink s2");
        return 100;
    }
    snprintf(p, sizeof p, "%s/taken", argv[1]);
    if (syscall(SYS_symlink, "src", p) == 0 || errno != EEXIST) {
        fprintf(stderr, "symlink taken: expected EEXIST\n");
        return 100;
    }
    return 0;
}
