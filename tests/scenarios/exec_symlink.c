// Scenario: exec through a symlink. The file read is the one the kernel runs, fully resolved (the
// link's target), not the link.
// argv[1]: a fresh directory; the test pre-creates bin/tool (a copy of /bin/true) and run -> bin/tool.
//   execv(<abs>/run, [run]) -> read bin/tool (not run)
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/run", argv[1]);
    char *args[] = {"run", NULL};
    execv(p, args);
    perror(p);
    return 100;
}
