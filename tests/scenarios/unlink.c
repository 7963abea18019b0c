// Scenario: unlink(2) (raw syscall) of a file, of a symlink (the link is removed, not its target),
// and of a missing file (ENOENT: nothing, unlink is not an open).
// argv[1]: a fresh directory; the test pre-creates f1, f2 and sl -> f2.
//   unlink(f1)      -> removed f1
//   unlink(sl)      -> removed sl (f2 untouched)
//   unlink(missing) -> nothing
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    must(syscall(SYS_unlink, at("f1")), "unlink f1");
    must(syscall(SYS_unlink, at("sl")), "unlink sl");
    must_fail(syscall(SYS_unlink, at("missing")), ENOENT, "unlink missing");
    return 0;
}
