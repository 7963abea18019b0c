// Scenario: exec through a symlink. The file read is the one the kernel runs, fully resolved (the
// link's target), not the link.
// argv[1]: a fresh directory; the test pre-creates bin/tool (a copy of /bin/true) and run -> bin/tool.
//   execv(<abs>/run, [run]) -> read bin/tool (not run)
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    char *args[] = {"run", NULL};
    execv(at("run"), args);
    perror("execv run");
    return 100;
}
