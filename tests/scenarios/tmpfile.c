// Scenario: O_TMPFILE. Opening an unnamed file in a directory records nothing (not even a listing of
// the directory); giving it a name with linkat creates that name. Both ways of naming it:
// AT_EMPTY_PATH on the fd (needs CAP_DAC_READ_SEARCH; the tests run as root) and /proc/self/fd/N
// with AT_SYMLINK_FOLLOW.
// argv[1]: a fresh directory.
//   fd = open(dir, O_TMPFILE|O_WRONLY); linkat(fd, "", AT_FDCWD, named, AT_EMPTY_PATH)     -> created named
//   fd = open(dir, O_TMPFILE|O_RDWR); linkat(AT_FDCWD, /proc/self/fd/N, AT_FDCWD, named2,
//                                            AT_SYMLINK_FOLLOW)                          -> created named2
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    char proc[64];
    int fd = must_setup(open(scenario_dir, O_TMPFILE | O_WRONLY, 0600), "O_TMPFILE 1");
    if (write(fd, "x", 1) != 1) {
        perror("write O_TMPFILE 1");
        return 101;
    }
    must(linkat(fd, "", AT_FDCWD, at("named"), AT_EMPTY_PATH), "linkat AT_EMPTY_PATH");
    close(fd);
    fd = must_setup(open(scenario_dir, O_TMPFILE | O_RDWR, 0600), "O_TMPFILE 2");
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    must(linkat(AT_FDCWD, proc, AT_FDCWD, at("named2"), AT_SYMLINK_FOLLOW), "linkat /proc/self/fd");
    close(fd);
    return 0;
}
