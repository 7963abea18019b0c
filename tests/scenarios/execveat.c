// Scenario: execveat(2) relative to a directory fd. The file it runs is read, by its canonical path.
// argv[1]: a fresh directory; the test pre-creates bin/tool (a copy of /bin/true).
//   execveat(binfd, "tool", ["tool"], environ, 0) -> read bin/tool
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/bin", argv[1]);
    int binfd = open(p, O_PATH | O_DIRECTORY);
    if (binfd < 0)
        return 101;
    char *args[] = {"tool", NULL};
    syscall(SYS_execveat, binfd, "tool", args, environ, 0);
    perror("execveat tool");
    return 100;
}
