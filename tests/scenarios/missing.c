// Scenario: opens of files that do not exist are probes (ENOENT), also under a missing directory and
// relative to a dirfd. A probe followed by the file's creation is both probed and created. stat and
// access of a missing file are not opens: nothing.
// argv[1]: a fresh directory.
//   open(missing.txt, O_RDONLY)                -> probed missing.txt
//   openat(dfd, missing2.txt, O_RDONLY)        -> probed missing2.txt
//   open(nodir/x, O_RDONLY)                    -> probed nodir/x
//   stat(statted), access(accessed)            -> nothing
//   open(later, O_RDONLY); open(later, O_CREAT|O_EXCL|O_WRONLY) -> probed, created, written later
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int dfd = dir_fd(AT_FDCWD, scenario_dir);
    open_fails(at("missing.txt"), O_RDONLY, ENOENT);
    must_fail(openat(dfd, "missing2.txt", O_RDONLY), ENOENT, "missing2.txt");
    open_fails(at("nodir/x"), O_RDONLY, ENOENT);
    struct stat st;
    must_fail(stat(at("statted"), &st), ENOENT, "stat statted");
    must_fail(access(at("accessed"), R_OK), ENOENT, "access accessed");
    open_fails(at("later"), O_RDONLY, ENOENT);
    create_file(at("later"));
    return 0;
}
