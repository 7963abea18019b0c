// Scenario: rename(2) (raw syscall) of a file and of a directory; a failed rename records nothing.
// argv[1]: a fresh directory; the test pre-creates a.txt and dir1/inner.txt.
//   rename(a.txt, b.txt)         -> renamed {a.txt -> b.txt}
//   rename(dir1, dir2)           -> renamed {dir1 -> dir2} (dir1/inner.txt is not touched)
//   rename(missing.txt, z.txt)   -> ENOENT: nothing (rename is not an open: no probe)
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    must(syscall(SYS_rename, at("a.txt"), at("b.txt")), "rename a.txt b.txt");
    must(syscall(SYS_rename, at("dir1"), at("dir2")), "rename dir1 dir2");
    must_fail(syscall(SYS_rename, at("missing.txt"), at("z.txt")), ENOENT, "rename missing.txt z.txt");
    return 0;
}
