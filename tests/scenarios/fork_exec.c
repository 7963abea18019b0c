// Scenario: fork + exec, and a fork that never execs. Child 1 execs /bin/cat on in.txt and exits 0;
// child 2 does not exec, writes its own file and exits 7. The parent exits 0.
// argv[1]: a fresh directory; the test pre-creates in.txt.
//   child 1: execv(/bin/cat, [/bin/cat, <abs>/in.txt])       -> read in.txt (and /usr/bin/cat)
//   child 2: open(child2.txt, O_CREAT|O_EXCL|O_WRONLY); exit 7 -> created, written child2.txt
// Prints "pid <pid>", "child1 <pid>", "child2 <pid>" on stdout.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char in[8192], out[8192];
    snprintf(in, sizeof in, "%s/in.txt", argv[1]);
    snprintf(out, sizeof out, "%s/child2.txt", argv[1]);
    printf("pid %d\n", getpid());
    fflush(stdout);
    pid_t c1 = fork();
    if (c1 < 0)
        return 101;
    if (c1 == 0) {
        char *args[] = {"/bin/cat", in, NULL};
        execv("/bin/cat", args);
        _exit(127);
    }
    int st;
    if (waitpid(c1, &st, 0) != c1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 100;
    pid_t c2 = fork();
    if (c2 < 0)
        return 101;
    if (c2 == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0644);
        _exit(fd < 0 ? 100 : 7);
    }
    if (waitpid(c2, &st, 0) != c2 || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
        return 100;
    printf("child1 %d\nchild2 %d\n", c1, c2);
    return 0;
}
