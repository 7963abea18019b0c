// Scenario: truncate(2) (raw syscall): of a file, through a symlink (the target is written), and of a
// missing file (ENOENT: nothing, truncate is not an open).
// argv[1]: a fresh directory; the test pre-creates t1, t2 and tl -> t2.
//   truncate(t1)      -> written t1
//   truncate(tl)      -> written t2 (truncate follows the final symlink)
//   truncate(missing) -> nothing
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    must(syscall(SYS_truncate, at("t1"), 0), "truncate t1");
    must(syscall(SYS_truncate, at("tl"), 1), "truncate tl");
    must_fail(syscall(SYS_truncate, at("missing"), 0), ENOENT, "truncate missing");
    return 0;
}
