// Scenario: unlinkat(2) (raw syscall) of a file relative to a dirfd, of a directory with
// AT_REMOVEDIR, and of an absolute path with AT_FDCWD.
// argv[1]: a fresh directory; the test pre-creates f, d/ (empty) and g.
//   unlinkat(dfd, f, 0)            -> removed f
//   unlinkat(dfd, d, AT_REMOVEDIR) -> removed d
//   unlinkat(AT_FDCWD, <abs>/g, 0) -> removed g
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int dfd = dir_fd(AT_FDCWD, scenario_dir);
    must(syscall(SYS_unlinkat, dfd, "f", 0), "unlinkat f");
    must(syscall(SYS_unlinkat, dfd, "d", AT_REMOVEDIR), "unlinkat d AT_REMOVEDIR");
    must(syscall(SYS_unlinkat, AT_FDCWD, at("g"), 0), "unlinkat g");
    return 0;
}
