// Scenario: exec of a shell script (#!/bin/sh). The script is read (the exec's file, and the shell
// reads it again); the shebang interpreter the kernel opens itself is seen by neither recorder.
// argv[1]: a fresh directory; the test pre-creates script.sh ("#!/bin/sh\nexit 0\n", mode 0755).
//   execv(<abs>/script.sh, [<abs>/script.sh, arg1]) -> read script.sh
// The process's argv after the exec is what the kernel runs: [/bin/sh, <abs>/script.sh, arg1].
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/script.sh", argv[1]);
    char *args[] = {p, "arg1", NULL};
    execv(p, args);
    perror(p);
    return 100;
}
