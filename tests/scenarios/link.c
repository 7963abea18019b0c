// Scenario: link(2) (raw syscall): a new hard link is a created name; the source is neither read nor
// written. A link onto an existing name fails (EEXIST): nothing.
// argv[1]: a fresh directory; the test pre-creates src and taken.
//   link(src, l1)    -> created l1
//   link(src, taken) -> EEXIST: nothing
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char a[8192], b[8192];
    snprintf(a, sizeof a, "%s/src", argv[1]);
    snprintf(b, sizeof b, "%s/l1", argv[1]);
    if (syscall(SYS_link, a, b) != 0) {
        perror("link src l1");
        return 100;
    }
    snprintf(b, sizeof b, "%s/taken", argv[1]);
    if (syscall(SYS_link, a, b) == 0 || errno != EEXIST) {
        fprintf(stderr, "link src taken: expected EEXIST\n");
        return 100;
    }
    return 0;
}
