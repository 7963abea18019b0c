// Scenario: mkdirat(2) (raw syscall) relative to a dirfd, and with AT_FDCWD + an absolute path.
// argv[1]: a fresh directory; the test pre-creates sub/.
//   mkdirat(dfd, a)                 -> created a
//   mkdirat(subfd, b)               -> created sub/b
//   mkdirat(AT_FDCWD, <abs>/c)      -> created c
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int dfd = dir_fd(AT_FDCWD, scenario_dir);
    int subfd = dir_fd(dfd, "sub");
    must(syscall(SYS_mkdirat, dfd, "a", 0755), "mkdirat a");
    must(syscall(SYS_mkdirat, subfd, "b", 0755), "mkdirat sub/b");
    must(syscall(SYS_mkdirat, AT_FDCWD, at("c"), 0755), "mkdirat c");
    return 0;
}
