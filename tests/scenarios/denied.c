// Scenario: opens and an exec that Landlock refuses (EACCES), as under qk run-many --sandbox=enforce.
// The program confines itself: a ruleset handling reading files and executing, one rule allowing both
// beneath allowed/ only, no_new_privs, landlock_restrict_self. Then:
//   open(allowed/ok.txt, O_RDONLY)       -> read allowed/ok.txt
//   open(secret.txt, O_RDONLY)           -> EACCES: denied secret.txt
//   open(allowed/to-secret2, O_RDONLY)   -> EACCES: the link is followed before permission is checked,
//                                           so denied secret2.txt (where it leads), not the link
//   openat(dirfd, "sub/secret3.txt")     -> EACCES, relative to a directory fd: denied sub/secret3.txt
//   open(allowed/missing, O_RDONLY)      -> ENOENT: probed allowed/missing (a refusal is not a probe)
//   execve(bin/tool)                     -> EACCES (executing is allowed beneath allowed/ only): denied
//   execve(allowed/nope)                 -> ENOENT: probed
// The ruleset's own directory fd is O_PATH, which records nothing.
// argv[1]: a fresh directory; the test lays out allowed/ok.txt, secret.txt, secret2.txt,
// sub/secret3.txt, allowed/to-secret2 -> ../secret2.txt and bin/tool (an executable).
// Exit 3: this kernel has no Landlock (or it is disabled), so nothing could be refused.
#include "scenario.h"

#include <linux/landlock.h>
#include <sys/prctl.h>

extern char **environ;

static void restrict_to(const char *dir)
{
    struct landlock_ruleset_attr ruleset = {
        .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE,
    };
    long fd = syscall(SYS_landlock_create_ruleset, &ruleset, sizeof ruleset, 0);
    if (fd < 0 && (errno == ENOSYS || errno == EOPNOTSUPP)) {
        perror("landlock_create_ruleset");
        exit(3);
    }
    must_setup(fd, "landlock_create_ruleset");
    struct landlock_path_beneath_attr beneath = {
        .allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE,
        .parent_fd = must_setup(open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), dir),
    };
    must_setup(syscall(SYS_landlock_add_rule, fd, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0), "landlock_add_rule");
    must_setup(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS");
    must_setup(syscall(SYS_landlock_restrict_self, fd, 0), "landlock_restrict_self");
    close(beneath.parent_fd);
    close((int)fd);
}

static void try_exec(const char *rel, int expect_errno)
{
    const char *p = at(rel);
    char *args[] = {(char *)p, NULL};
    must_fail(execve(p, args, environ), expect_errno, p);
}

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    restrict_to(at("allowed"));
    open_close(at("allowed/ok.txt"), O_RDONLY);
    open_fails(at("secret.txt"), O_RDONLY, EACCES);
    open_fails(at("allowed/to-secret2"), O_RDONLY, EACCES);
    int dir = dir_fd(AT_FDCWD, scenario_dir);
    must_fail(openat(dir, "sub/secret3.txt", O_RDONLY), EACCES, "sub/secret3.txt");
    open_fails(at("allowed/missing"), O_RDONLY, ENOENT);
    try_exec("bin/tool", EACCES);
    try_exec("allowed/nope", ENOENT);
    return 0;
}
