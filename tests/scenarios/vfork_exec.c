// Scenario: vfork + exec. The child execs /bin/cat on in.txt: the exec'd file is read (as its canonical
// path, /usr/bin/cat on a merged-/usr system) and so is in.txt, by cat.
// argv[1]: a fresh directory; the test pre-creates in.txt.
//   child: execv(/bin/cat, [/bin/cat, <abs>/in.txt]) -> read in.txt (and /usr/bin/cat)
// Prints "pid <pid>" and "child <pid>" on stdout (cat's output goes to stdout too).
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    const char *p = at("in.txt");
    print_pid();
    char *args[] = {"/bin/cat", (char *)p, NULL};
    pid_t c = vfork();
    if (c < 0)
        return 101;
    if (c == 0) {
        execv("/bin/cat", args);
        _exit(127);
    }
    wait_exit(c, 0);
    printf("child %d\n", c);
    return 0;
}
