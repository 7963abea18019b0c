// Scenario: ftruncate(2) names the file by its fd. To see ftruncate's own record (the open already
// makes f1 written), the file is renamed between the open and the ftruncate: the fd's file is then
// f2, so f2 is written only if ftruncate is recorded, from the kernel's path of the fd.
// argv[1]: a fresh directory; the test pre-creates f1.
//   open(f1, O_WRONLY)  -> written f1
//   rename(f1, f2)      -> renamed {f1 -> f2}
//   ftruncate(fd)       -> written f2
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int fd = must(open(at("f1"), O_WRONLY), "open f1");
    must(rename(at("f1"), at("f2")), "rename f1 f2");
    must(syscall(SYS_ftruncate, fd, 0), "ftruncate");
    close(fd);
    return 0;
}
