// Scenario: renameat(2) (raw syscall): relative to directory fds, and mixing AT_FDCWD + absolute.
// argv[1]: a fresh directory; the test pre-creates a.txt, b.txt and sub/.
//   renameat(dfd, a.txt, subfd, a2.txt)          -> renamed {a.txt -> sub/a2.txt}
//   renameat(AT_FDCWD, <abs>/b.txt, dfd, b2.txt) -> renamed {b.txt -> b2.txt}
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int dfd = dir_fd(AT_FDCWD, scenario_dir);
    int subfd = dir_fd(dfd, "sub");
    must(syscall(SYS_renameat, dfd, "a.txt", subfd, "a2.txt"), "renameat a.txt");
    must(syscall(SYS_renameat, AT_FDCWD, at("b.txt"), dfd, "b2.txt"), "renameat b.txt");
    return 0;
}
