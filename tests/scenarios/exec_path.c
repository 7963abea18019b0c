// Scenario: a PATH search (execvp). glibc tries each PATH entry in turn: the misses are probes, the hit
// is read. bin1/ exists but has no tool; bin2/tool is a copy of /bin/true.
// argv[1]: a fresh directory; the test pre-creates bin1/ and bin2/tool.
//   execvp("tool") with PATH=<abs>/bin1:<abs>/bin2 -> probed bin1/tool, read bin2/tool
// The process's argv after the exec is ["tool"].
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    char path[16384];
    snprintf(path, sizeof path, "%s/bin1:%s/bin2", scenario_dir, scenario_dir);
    setenv("PATH", path, 1);
    char *args[] = {"tool", NULL};
    execvp("tool", args);
    perror("execvp tool");
    return 100;
}
