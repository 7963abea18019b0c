// Scenario: renameat2(2) with RENAME_EXCHANGE: both names stay, their contents swap, so the
// recording holds both directions. Also a directory exchanged with a file.
// argv[1]: a fresh directory; the test pre-creates x.txt, y.txt, dirx/ and filey.
//   renameat2(x.txt, y.txt, RENAME_EXCHANGE) -> renamed {x.txt -> y.txt} and {y.txt -> x.txt}
//   renameat2(dirx, filey, RENAME_EXCHANGE)  -> renamed {dirx -> filey} and {filey -> dirx}
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int dfd = dir_fd(AT_FDCWD, scenario_dir);
    must(syscall(SYS_renameat2, dfd, "x.txt", dfd, "y.txt", RENAME_EXCHANGE), "renameat2 x.txt y.txt EXCHANGE");
    must(syscall(SYS_renameat2, dfd, "dirx", dfd, "filey", RENAME_EXCHANGE), "renameat2 dirx filey EXCHANGE");
    return 0;
}
