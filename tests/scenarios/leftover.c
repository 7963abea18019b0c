// Scenario: a command that leaves a daemon behind. A child calls setsid() and forks a grandchild that
// redirects its stdio to /dev/null and execs `sleep 300`; once that exec has happened (a close-on-exec
// pipe reaches EOF) the child and the command exit. The daemon is still in the command's cgroup, so qk-trace must kill it (and count it) instead
// of waiting 300 s.
// argv[1]: a fresh directory.
//   open(started.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written started.txt
// Prints "pid <pid>" and "daemon <pid>" on stdout.
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    create_file(at("started.txt"));
    print_pid();
    pid_t c = must_setup(fork(), "fork");
    if (c == 0) {
        setsid();
        int ready[2];
        if (pipe2(ready, O_CLOEXEC) != 0)
            _exit(101);
        pid_t g = fork();
        if (g < 0)
            _exit(101);
        if (g == 0) {
            int null = open("/dev/null", O_RDWR);
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
            execl("/bin/sleep", "sleep", "300", (char *)NULL);
            _exit(127);
        }
        close(ready[1]);
        char byte;
        while (read(ready[0], &byte, 1) > 0) {
        }  // EOF: the grandchild's exec closed its end
        printf("daemon %d\n", g);
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 100;
}
