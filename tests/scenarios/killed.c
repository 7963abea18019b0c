// Scenario: processes killed by signals. A child that waits forever is killed with SIGTERM; then the
// command kills itself with SIGKILL (so qk-trace exits 128 + 9 = 137).
// argv[1]: a fresh directory.
//   open(before.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written before.txt (recorded before the kill)
// Prints "pid <pid>" and "child <pid>" on stdout.
#include "scenario.h"
#include <signal.h>

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    create_file(at("before.txt"));
    print_pid();
    pid_t c = must_setup(fork(), "fork");
    if (c == 0) {
        for (;;)
            pause();
    }
    kill(c, SIGTERM);
    int st;
    if (waitpid(c, &st, 0) != c || !WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM)
        return 100;
    printf("child %d\n", c);
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 100;
}
