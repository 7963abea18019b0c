// Scenario: fchdir(2) (raw syscall) to a directory fd opened for reading (that open lists the
// directory) and to one opened O_PATH (records nothing), each followed by relative operations.
// argv[1]: a fresh directory; the test pre-creates sub/in.txt, other/ and other/gone.
//   fd = open(sub, O_RDONLY|O_DIRECTORY)     -> listed sub
//   fchdir(fd); open(in.txt)                 -> read sub/in.txt
//   fd2 = open(other, O_PATH|O_DIRECTORY)    -> nothing
//   fchdir(fd2); open(new.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written other/new.txt
//                unlink(gone)                -> removed other/gone
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int fd = must_setup(open(at("sub"), O_RDONLY | O_DIRECTORY), "open sub");
    int fd2 = dir_fd(AT_FDCWD, at("other"));
    must(syscall(SYS_fchdir, fd), "fchdir sub");
    open_close("in.txt", O_RDONLY);
    must(syscall(SYS_fchdir, fd2), "fchdir other");
    int f = must(open("new.txt", O_WRONLY | O_CREAT | O_EXCL, 0644), "open new.txt");
    must(unlink("gone"), "unlink gone");
    close(f);
    return 0;
}
