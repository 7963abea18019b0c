// Scenario: relative paths against the cwd the command was started in (qk-trace -C <dir>): the
// program never calls chdir, so the recorder must know the initial cwd.
// argv[1]: the fresh directory (also the cwd); the test pre-creates a.txt, sub/, r1 and u.
//   open("a.txt") (raw open)                   -> read a.txt
//   openat(AT_FDCWD, "sub/b.txt", O_CREAT|O_EXCL|O_WRONLY) -> created, written sub/b.txt
//   mkdir("m")                                  -> created m
//   rename("r1", "r2")                          -> renamed {r1 -> r2}
//   unlink("u")                                 -> removed u
//   symlink("a.txt", "sl")                      -> created sl
//   open("./missing")                           -> probed missing
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    char cwd[8192];
    if (!getcwd(cwd, sizeof cwd) || strcmp(cwd, scenario_dir) != 0) {
        fprintf(stderr, "rel_cwd: must start in %s (qk-trace -C), not %s\n", scenario_dir, cwd);
        return 101;
    }
    opened(syscall(SYS_open, "a.txt", O_RDONLY), 0, "open a.txt");
    opened(syscall(SYS_openat, AT_FDCWD, "sub/b.txt", O_WRONLY | O_CREAT | O_EXCL, 0644), 0, "openat sub/b.txt");
    must(syscall(SYS_mkdir, "m", 0755), "mkdir m");
    must(syscall(SYS_rename, "r1", "r2"), "rename r1 r2");
    must(syscall(SYS_unlink, "u"), "unlink u");
    must(syscall(SYS_symlink, "a.txt", "sl"), "symlink a.txt sl");
    must_fail(syscall(SYS_open, "./missing", O_RDONLY), ENOENT, "open ./missing");
    return 0;
}
