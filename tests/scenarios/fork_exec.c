// Scenario: fork + exec, and a fork that never execs. Child 1 execs /bin/cat on in.txt and exits 0;
// child 2 does not exec, writes its own file and exits 7. The parent exits 0.
// argv[1]: a fresh directory; the test pre-creates in.txt.
//   child 1: execv(/bin/cat, [/bin/cat, <abs>/in.txt])       -> read in.txt (and /usr/bin/cat)
//   child 2: open(child2.txt, O_CREAT|O_EXCL|O_WRONLY); exit 7 -> created, written child2.txt
// Prints "pid <pid>", "child1 <pid>", "child2 <pid>" on stdout.
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    const char *in = at("in.txt"), *out = at("child2.txt");
    print_pid();
    pid_t c1 = must_setup(fork(), "fork");
    if (c1 == 0) {
        char *args[] = {"/bin/cat", (char *)in, NULL};
        execv("/bin/cat", args);
        _exit(127);
    }
    wait_exit(c1, 0);
    pid_t c2 = must_setup(fork(), "fork");
    if (c2 == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0644);
        _exit(fd < 0 ? 100 : 7);
    }
    wait_exit(c2, 7);
    printf("child1 %d\nchild2 %d\n", c1, c2);
    return 0;
}
