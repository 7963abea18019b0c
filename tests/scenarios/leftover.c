// Scenario: a command that leaves a daemon behind. A child calls setsid() and forks a grandchild that
// redirects its stdio to /dev/null and execs `sleep 300`; once that exec has happened (a close-on-exec
// pipe reaches EOF) the child and the command exit. The daemon is still in the command's cgroup, so qk-trace must kill it (and count it) instead
// of waiting 300 s.
// argv[1]: a fresh directory.
//   open(started.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written started.txt
// Prints "pid <pid>" and "daemon <pid>" on stdout.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/started.txt", argv[1]);
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
