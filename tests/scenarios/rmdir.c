// Scenario: rmdir(2) (raw syscall) of an empty directory, and of a non-empty one (ENOTEMPTY: nothing).
// argv[1]: a fresh directory; the test pre-creates empty/ and full/file.
//   rmdir(empty) -> removed empty
//   rmdir(full)  -> ENOTEMPTY: nothing
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    must(syscall(SYS_rmdir, at("empty")), "rmdir empty");
    must_fail(syscall(SYS_rmdir, at("full")), ENOTEMPTY, "rmdir full");
    return 0;
}
