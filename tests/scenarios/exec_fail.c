// Scenario: failed execs. A missing file is a probe (ENOENT); a file that is not executable (EACCES)
// records nothing; a missing directory on the way is a probe of the whole path. Nothing is read:
// only a successful exec reads its file.
// argv[1]: a fresh directory; the test pre-creates notexec (mode 0644).
//   execve(nope)          -> probed nope
//   execve(nodir/x)       -> probed nodir/x
//   execve(notexec)       -> EACCES: nothing
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

extern char **environ;

static int try_exec(const char *dir, const char *rel, int expect_errno)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    char *args[] = {p, NULL};
    execve(p, args, environ);
    if (errno != expect_errno) {
        perror(p);
        return 100;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (try_exec(argv[1], "nope", ENOENT) || try_exec(argv[1], "nodir/x", ENOENT) ||
        try_exec(argv[1], "notexec", EACCES))
        return 100;
    return 0;
}
