// Scenario: a directory fd whose directory is renamed after it was opened. Operations relative to the
// fd happen in the directory's new place: the recorder must resolve the dirfd as the kernel does now,
// not by the name it was opened with.
// argv[1]: a fresh directory; the test pre-creates sub/a.txt.
//   dfd = open(sub, O_PATH)         -> nothing
//   rename(sub, moved)              -> renamed {sub -> moved}
//   openat(dfd, a.txt, O_RDONLY)    -> read moved/a.txt
//   mkdirat(dfd, m)                 -> created moved/m
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int dfd = dir_fd(AT_FDCWD, at("sub"));
    must(rename(at("sub"), at("moved")), "rename sub moved");
    int fd = must(openat(dfd, "a.txt", O_RDONLY), "openat a.txt");
    must(syscall(SYS_mkdirat, dfd, "m", 0755), "mkdirat m");
    close(fd);
    return 0;
}
