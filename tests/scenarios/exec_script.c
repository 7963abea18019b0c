// Scenario: exec of a shell script (#!/bin/sh). The script is read (the exec's file, and the shell
// reads it again); the shebang interpreter the kernel opens itself is seen by neither recorder.
// argv[1]: a fresh directory; the test pre-creates script.sh ("#!/bin/sh\nexit 0\n", mode 0755).
//   execv(<abs>/script.sh, [<abs>/script.sh, arg1]) -> read script.sh
// The process's argv after the exec is what the kernel runs: [/bin/sh, <abs>/script.sh, arg1].
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    const char *p = at("script.sh");
    char *args[] = {(char *)p, "arg1", NULL};
    execv(p, args);
    perror(p);
    return 100;
}
