// Scenario: creat(2) (raw syscall), which is open(O_WRONLY|O_CREAT|O_TRUNC).
// argv[1]: a fresh directory; the test pre-creates exists.txt.
//   new.txt     (does not exist) -> created, written
//   exists.txt  (exists)         -> written (truncated), not created
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    opened(syscall(SYS_creat, at("new.txt"), 0644), 0, "creat new.txt");
    opened(syscall(SYS_creat, at("exists.txt"), 0644), 0, "creat exists.txt");
    return 0;
}
