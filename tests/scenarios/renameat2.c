// Scenario: renameat2(2) (raw syscall) with flags 0 and RENAME_NOREPLACE, succeeding and failing.
// argv[1]: a fresh directory; the test pre-creates p1, n1, k1 and k2.
//   renameat2(p1, p2, 0)                -> renamed {p1 -> p2}
//   renameat2(n1, n2, RENAME_NOREPLACE) -> renamed {n1 -> n2} (n2 did not exist)
//   renameat2(k1, k2, RENAME_NOREPLACE) -> EEXIST: nothing
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int dfd = dir_fd(AT_FDCWD, scenario_dir);
    must(syscall(SYS_renameat2, dfd, "p1", dfd, "p2", 0), "renameat2 p1 p2 0");
    must(syscall(SYS_renameat2, dfd, "n1", dfd, "n2", RENAME_NOREPLACE), "renameat2 n1 n2 NOREPLACE");
    must_fail(syscall(SYS_renameat2, dfd, "k1", dfd, "k2", RENAME_NOREPLACE), EEXIST, "renameat2 k1 k2 NOREPLACE");
    return 0;
}
