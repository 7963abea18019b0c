// Scenario: a file opened by handle (name_to_handle_at, then open_by_handle_at), which passes no name
// the recorder could read: only the opened fd says which file it is. Needs CAP_DAC_READ_SEARCH.
// argv[1]: a directory holding handle.txt -> read (handle.txt)
#include "scenario.h"

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
    if (!h)
        exit(101);
    h->handle_bytes = MAX_HANDLE_SZ;
    int mount_id;
    if (name_to_handle_at(AT_FDCWD, at("handle.txt"), h, &mount_id, 0) != 0)
        exit(101);
    int mount_fd = open(scenario_dir, O_RDONLY | O_DIRECTORY);  // any fd on the same filesystem
    if (mount_fd < 0)
        exit(101);
    int fd = open_by_handle_at(mount_fd, h, O_RDONLY);
    if (fd < 0)
        exit(100);
    char c;
    if (read(fd, &c, 1) != 1)
        exit(100);
    return 0;
}
