// Scenario: execveat(2) relative to a directory fd. The file it runs is read, by its canonical path.
// argv[1]: a fresh directory; the test pre-creates bin/tool (a copy of /bin/true).
//   execveat(binfd, "tool", ["tool"], environ, 0) -> read bin/tool
#include "scenario.h"

extern char **environ;

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int binfd = dir_fd(AT_FDCWD, at("bin"));
    char *args[] = {"tool", NULL};
    syscall(SYS_execveat, binfd, "tool", args, environ, 0);
    perror("execveat tool");
    return 100;
}
