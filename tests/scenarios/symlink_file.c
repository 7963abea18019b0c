// Scenario: opens through a symlink to a file: the final symlink is followed, so the recorded path is
// the target's. O_NOFOLLOW on the link fails (ELOOP: nothing). An O_CREAT open through a dangling
// symlink creates its target.
// argv[1]: a fresh directory; the test pre-creates target.txt, ln -> target.txt, sub/t2.txt,
// ln2 -> sub/t2.txt (a relative link into a subdirectory) and dangle -> made-by-link.txt.
//   open(ln, O_RDONLY)              -> read target.txt
//   open(ln2, O_WRONLY)             -> written sub/t2.txt
//   open(ln, O_RDONLY|O_NOFOLLOW)   -> ELOOP: nothing
//   open(dangle, O_WRONLY|O_CREAT)  -> created, written made-by-link.txt
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    open_close(at("ln"), O_RDONLY);
    open_close(at("ln2"), O_WRONLY);
    open_fails(at("ln"), O_RDONLY | O_NOFOLLOW, ELOOP);
    open_close(at("dangle"), O_WRONLY | O_CREAT);
    return 0;
}
