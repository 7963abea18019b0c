// Scenario: the cwd's directory is renamed after the chdir. Relative operations then happen in its new
// place: the recorder must resolve the cwd as the kernel does at the time of the call, not by the name
// chdir was given.
// argv[1]: a fresh directory; the test pre-creates sub/b.txt.
//   chdir(sub)                      -> nothing
//   rename(<abs>/sub, <abs>/moved)  -> renamed {sub -> moved}
//   open("b.txt") (raw open)        -> read moved/b.txt
//   mkdir("n")                      -> created moved/n
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char a[8192], b[8192];
    snprintf(a, sizeof a, "%s/sub", argv[1]);
    snprintf(b, sizeof b, "%s/moved", argv[1]);
    if (chdir(a) != 0 || rename(a, b) != 0) {
        perror("chdir/rename");
        return 100;
    }
    long fd = syscall(SYS_open, "b.txt", O_RDONLY);
    if (fd < 0 || syscall(SYS_mkdir, "n", 0755) != 0) {
        perror("open b.txt / mkdir n");
        return 100;
    }
    close((int)fd);
    return 0;
}
