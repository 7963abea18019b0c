// Scenario: processes killed by signals. A child that waits forever is killed with SIGTERM; then the
// command kills itself with SIGKILL (so qk-trace exits 128 + 9 = 137).
// argv[1]: a fresh directory.
//   open(before.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written before.txt (recorded before the kill)
// Prints "pid <pid>" and "child <pid>" on stdout.
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/before.txt", argv[1]);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return 100;
    close(fd);
    printf("pid %d\n", getpid());
    fflush(stdout);
    pid_t c = fork();
    if (c < 0)
        return 101;
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
