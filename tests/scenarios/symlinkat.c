// Scenario: symlinkat(2) (raw syscall) relative to a dirfd and with AT_FDCWD + an absolute path.
// argv[1]: a fresh directory; the test pre-creates src and sub/.
//   symlinkat("../src", subfd, s3)       -> created sub/s3
//   symlinkat("src", AT_FDCWD, <abs>/s4) -> created s4
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    int subfd = dir_fd(dir_fd(AT_FDCWD, scenario_dir), "sub");
    must(syscall(SYS_symlinkat, "../src", subfd, "s3"), "symlinkat sub/s3");
    must(syscall(SYS_symlinkat, "src", AT_FDCWD, at("s4")), "symlinkat s4");
    return 0;
}
