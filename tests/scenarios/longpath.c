// Scenario: a path longer than 4096 bytes (PATH_MAX). Directories of 200-byte names are made and
// entered one by one (mkdir + chdir with short relative names, which the kernel accepts at any depth)
// until the absolute cwd is longer than 4096 bytes; then a file is created and read there. No
// recorder can hold such a path whole, so the recording must be incomplete, never wrong.
// argv[1]: a fresh directory.
// Prints each directory made and the file as "made <absolute path>", for the test to check that every
// recorded path is a real one.
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    static char cwd[16384];
    char name[201];
    memset(name, 'd', 200);
    name[200] = '\0';
    must_setup(chdir(scenario_dir), scenario_dir);
    snprintf(cwd, sizeof cwd, "%s", scenario_dir);
    while (strlen(cwd) <= 4096 + 300) {
        must(mkdir(name, 0755), "mkdir");
        must(chdir(name), "chdir");
        strcat(cwd, "/");
        strcat(cwd, name);
        printf("made %s\n", cwd);
    }
    create_file("f");
    open_close("f", O_RDONLY);
    printf("made %s/f\n", cwd);
    return 0;
}
