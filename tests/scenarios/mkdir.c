// Scenario: mkdir(2) (raw syscall): a new directory, a nested one, and an existing one (EEXIST: nothing).
// argv[1]: a fresh directory; the test pre-creates exists/.
//   mkdir(m1)     -> created m1
//   mkdir(m1/m2)  -> created m1/m2
//   mkdir(exists) -> EEXIST: nothing
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    must(syscall(SYS_mkdir, at("m1"), 0755), "mkdir m1");
    must(syscall(SYS_mkdir, at("m1/m2"), 0755), "mkdir m1/m2");
    must_fail(syscall(SYS_mkdir, at("exists"), 0755), EEXIST, "mkdir exists");
    return 0;
}
