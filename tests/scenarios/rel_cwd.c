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
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char cwd[8192];
    if (!getcwd(cwd, sizeof cwd) || strcmp(cwd, argv[1]) != 0) {
        fprintf(stderr, "rel_cwd: must start in %s (qk-trace -C), not %s\n", argv[1], cwd);
        return 101;
    }
    long fd = syscall(SYS_open, "a.txt", O_RDONLY);
    if (fd < 0) {
        perror("open a.txt");
        return 100;
    }
    close((int)fd);
    fd = syscall(SYS_openat, AT_FDCWD, "sub/b.txt", O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        perror("openat sub/b.txt");
        return 100;
    }
    close((int)fd);
    if (syscall(SYS_mkdir, "m", 0755) != 0 || syscall(SYS_rename, "r1", "r2") != 0 ||
        syscall(SYS_unlink, "u") != 0 || syscall(SYS_symlink, "a.txt", "sl") != 0) {
        perror("mkdir/rename/unlink/symlink");
        return 100;
    }
    if (syscall(SYS_open, "./missing", O_RDONLY) >= 0 || errno != ENOENT) {
        fprintf(stderr, "open ./missing: expected ENOENT\n");
        return 100;
    }
    return 0;
}
