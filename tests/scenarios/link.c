// Scenario: link(2) (raw syscall): a new hard link is a created name; the source is neither read nor
// written. A link onto an existing name fails (EEXIST): nothing.
// argv[1]: a fresh directory; the test pre-creates src and taken.
//   link(src, l1)    -> created l1
//   link(src, taken) -> EEXIST: nothing
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    must(syscall(SYS_link, at("src"), at("l1")), "link src l1");
    must_fail(syscall(SYS_link, at("src"), at("taken")), EEXIST, "link src taken");
    return 0;
}
