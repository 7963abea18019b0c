// Scenario: symlink(2) (raw syscall): the link path is created; its target is not touched (it may not
// even exist). A symlink onto an existing name fails (EEXIST): nothing.
// argv[1]: a fresh directory; the test pre-creates src and taken.
//   symlink("src", s1)                 -> created s1
//   symlink("/nonexistent/target", s2) -> created s2 (dangling)
//   symlink("src", taken)              -> EEXIST: nothing
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    must(syscall(SYS_symlink, "src", at("s1")), "symlink s1");
    must(syscall(SYS_symlink, "/nonexistent/target", at("s2")), "symlink s2");
    must_fail(syscall(SYS_symlink, "src", at("taken")), EEXIST, "symlink taken");
    return 0;
}
