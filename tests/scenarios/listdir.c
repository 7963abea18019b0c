// Scenario: directory listings. opendir/readdir (an O_DIRECTORY open) lists the directory; so does a
// plain open(O_RDONLY) of a directory without O_DIRECTORY followed by getdents64. The entries listed
// are not read.
// argv[1]: a fresh directory; the test pre-creates dir/a, dir/b, dir2/c.
//   opendir(dir) + readdir                  -> listed dir
//   open(dir2, O_RDONLY) + getdents64       -> listed dir2
#include "scenario.h"
#include <dirent.h>

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    DIR *d = opendir(at("dir"));
    if (!d) {
        perror("opendir dir");
        return 100;
    }
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    int fd = must(open(at("dir2"), O_RDONLY), "open dir2");
    char buf[4096];
    while (syscall(SYS_getdents64, fd, buf, sizeof buf) > 0)
        n++;
    close(fd);
    return n >= 4 ? 0 : 100;
}
