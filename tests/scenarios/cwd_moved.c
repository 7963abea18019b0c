// Scenario: the cwd's directory is renamed after the chdir. Relative operations then happen in its new
// place: the recorder must resolve the cwd as the kernel does at the time of the call, not by the name
// chdir was given.
// argv[1]: a fresh directory; the test pre-creates sub/b.txt.
//   chdir(sub)                      -> nothing
//   rename(<abs>/sub, <abs>/moved)  -> renamed {sub -> moved}
//   open("b.txt") (raw open)        -> read moved/b.txt
//   mkdir("n")                      -> created moved/n
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    must(chdir(at("sub")), "chdir sub");
    must(rename(at("sub"), at("moved")), "rename sub moved");
    long fd = must(syscall(SYS_open, "b.txt", O_RDONLY), "open b.txt");
    must(syscall(SYS_mkdir, "n", 0755), "mkdir n");
    close((int)fd);
    return 0;
}
