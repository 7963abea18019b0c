// Scenario: chdir(2) (raw syscall), absolute and relative, each followed by relative file operations
// that must be resolved against the new cwd.
// argv[1]: a fresh directory; the test pre-creates sub/in.txt, sub/in2.txt, sub/deeper/ and up.txt.
//   chdir(<abs>/sub); open(in.txt)          -> read sub/in.txt
//                     open(../up.txt)       -> read up.txt
//                     mkdir(made)           -> created sub/made
//   chdir(..);        open(sub/in2.txt)     -> read sub/in2.txt
//   chdir(sub/deeper); open(x.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written sub/deeper/x.txt
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    must(syscall(SYS_chdir, at("sub")), "chdir sub");
    open_close("in.txt", O_RDONLY);
    open_close("../up.txt", O_RDONLY);
    must(mkdir("made", 0755), "mkdir made");
    must(syscall(SYS_chdir, ".."), "chdir ..");
    open_close("sub/in2.txt", O_RDONLY);
    must(syscall(SYS_chdir, "sub/deeper"), "chdir sub/deeper");
    create_file("x.txt");
    return 0;
}
