// Scenario: a path longer than 4096 bytes (PATH_MAX). Directories of 200-byte names are made and
// entered one by one (mkdir + chdir with short relative names, which the kernel accepts at any depth)
// until the absolute cwd is longer than 4096 bytes; then a file is created and read there. No
// recorder can hold such a path whole, so the recording must be incomplete, never wrong.
// argv[1]: a fresh directory.
// Prints each directory made and the file as "made <absolute path>", for the test to check that every
// recorded path is a real one.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    static char cwd[16384];
    char name[201];
    memset(name, 'd', 200);
    name[200] = '\0';
    if (chdir(argv[1]) != 0)
        return 101;
    snprintf(cwd, sizeof cwd, "%s", argv[1]);
    while (strlen(cwd) <= 4096 + 300) {
        if (mkdir(name, 0755) != 0 || chdir(name) != 0) {
            perror("mkdir/chdir");
            return 100;
        }
        strcat(cwd, "/");
        strcat(cwd, name);
        printf("made %s\n", cwd);
    }
    int fd = open("f", O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        perror("create f");
        return 100;
    }
    close(fd);
    fd = open("f", O_RDONLY);
    if (fd < 0) {
        perror("open f");
        return 100;
    }
    close(fd);
    printf("made %s/f\n", cwd);
    return 0;
}
