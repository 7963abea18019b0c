// Scenario: vfork + exec. The child execs /bin/cat on in.txt: the exec'd file is read (as its canonical
// path, /usr/bin/cat on a merged-/usr system) and so is in.txt, by cat.
// argv[1]: a fresh directory; the test pre-creates in.txt.
//   child: execv(/bin/cat, [/bin/cat, <abs>/in.txt]) -> read in.txt (and /usr/bin/cat)
// Prints "pid <pid>" and "child <pid>" on stdout (cat's output goes to stdout too).
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/in.txt", argv[1]);
    printf("pid %d\n", getpid());
    fflush(stdout);
    char *args[] = {"/bin/cat", p, NULL};
    pid_t c = vfork();
    if (c < 0)
        return 101;
    if (c == 0) {
        execv("/bin/cat", args);
        _exit(127);
    }
    int st;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 100;
    printf("child %d\n", c);
    return 0;
}
