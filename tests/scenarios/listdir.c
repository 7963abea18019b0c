// Scenario: directory listings. opendir/readdir (an O_DIRECTORY open) lists the directory; so does a
// plain open(O_RDONLY) of a directory without O_DIRECTORY followed by getdents64. The entries listed
// are not read.
// argv[1]: a fresh directory; the test pre-creates dir/a, dir/b, dir2/c.
//   opendir(dir) + readdir                  -> listed dir
//   open(dir2, O_RDONLY) + getdents64       -> listed dir2
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char p[8192];
    snprintf(p, sizeof p, "%s/dir", argv[1]);
    DIR *d = opendir(p);
    if (!d) {
        perror(p);
        return 100;
    }
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    snprintf(p, sizeof p, "%s/dir2", argv[1]);
    int fd = open(p, O_RDONLY);
    if (fd < 0) {
        perror(p);
        return 100;
    }
    char buf[4096];
    while (syscall(SYS_getdents64, fd, buf, sizeof buf) > 0)
        n++;
    close(fd);
    return n >= 4 ? 0 : 100;
}
