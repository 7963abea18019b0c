// Scenario: chdir(2) (raw syscall), absolute and relative, each followed by relative file operations
// that must be resolved against the new cwd.
// argv[1]: a fresh directory; the test pre-creates sub/in.txt, sub/in2.txt, sub/deeper/ and up.txt.
//   chdir(<abs>/sub); open(in.txt)          -> read sub/in.txt
//                     open(../up.txt)       -> read up.txt
//                     mkdir(made)           -> created sub/made
//   chdir(..);        open(sub/in2.txt)     -> read sub/in2.txt
//   chdir(sub/deeper); open(x.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written sub/deeper/x.txt
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void cd(const char *p)
{
    if (syscall(SYS_chdir, p) != 0) {
        perror(p);
        exit(100);
    }
}

static void op(const char *p, int flags)
{
    int fd = open(p, flags, 0644);
    if (fd < 0) {
        perror(p);
        exit(100);
    }
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/sub", argv[1]);
    cd(p);
    op("in.txt", O_RDONLY);
    op("../up.txt", O_RDONLY);
    if (mkdir("made", 0755) != 0) {
        perror("mkdir made");
        return 100;
    }
    cd("..");
    op("sub/in2.txt", O_RDONLY);
    cd("sub/deeper");
    op("x.txt", O_WRONLY | O_CREAT | O_EXCL);
    return 0;
}
