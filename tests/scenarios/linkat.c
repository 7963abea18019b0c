// Scenario: linkat(2) (raw syscall) relative to dirfds; with AT_SYMLINK_FOLLOW through a symlink
// (the new name links the target), and without it (the new name links the symlink itself).
// argv[1]: a fresh directory; the test pre-creates src, sub/ and sl -> src.
//   linkat(dfd, src, subfd, l2, 0)                -> created sub/l2
//   linkat(dfd, sl, dfd, l3, AT_SYMLINK_FOLLOW)   -> created l3
//   linkat(dfd, sl, dfd, l4, 0)                   -> created l4
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int dfd = dir_fd(AT_FDCWD, scenario_dir);
    int subfd = dir_fd(dfd, "sub");
    must(syscall(SYS_linkat, dfd, "src", subfd, "l2", 0), "linkat src sub/l2");
    must(syscall(SYS_linkat, dfd, "sl", dfd, "l3", AT_SYMLINK_FOLLOW), "linkat sl l3 AT_SYMLINK_FOLLOW");
    must(syscall(SYS_linkat, dfd, "sl", dfd, "l4", 0), "linkat sl l4");
    return 0;
}
