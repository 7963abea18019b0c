// Scenario: failed execs. A missing file is a probe (ENOENT); a file that is not executable (EACCES)
// is a denial (recorded when the recorder is asked for them, as qk-trace always does); a missing
// directory on the way is a probe of the whole path. Nothing is read: only a successful exec reads
// its file.
// argv[1]: a fresh directory; the test pre-creates notexec (mode 0644).
//   execve(nope)          -> probed nope
//   execve(nodir/x)       -> probed nodir/x
//   execve(notexec)       -> EACCES (no execute bit, even for root): denied notexec
#include "scenario.h"

extern char **environ;

static void try_exec(const char *rel, int expect_errno)
{
    const char *p = at(rel);
    char *args[] = {(char *)p, NULL};
    must_fail(execve(p, args, environ), expect_errno, p);
}

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    try_exec("nope", ENOENT);
    try_exec("nodir/x", ENOENT);
    try_exec("notexec", EACCES);
    return 0;
}
