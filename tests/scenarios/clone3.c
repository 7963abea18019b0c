// Scenario: clone3(2) (raw syscall, no glibc wrapper) creating a child process (no CLONE_VM: a copy,
// like fork). The child creates child.txt and exits 3; the parent waits, then creates parent.txt.
// argv[1]: a fresh directory.
//   child:  open(child.txt, O_CREAT|O_EXCL|O_WRONLY)  -> created, written child.txt
//   parent: open(parent.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written parent.txt
// Prints "pid <pid>" and "child <pid>" on stdout.
#include "scenario.h"
#include <linux/sched.h>
#include <signal.h>

int main(int argc, char **argv)
{
    scenario_start(argc, argv);
    const char *c = at("child.txt"), *p = at("parent.txt");
    print_pid();
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.exit_signal = SIGCHLD;
    long pid = must_setup(syscall(SYS_clone3, &args, sizeof args), "clone3");
    if (pid == 0) {
        // Raw syscalls only in the child: it was not created through glibc.
        long fd = syscall(SYS_openat, AT_FDCWD, c, O_WRONLY | O_CREAT | O_EXCL, 0644);
        syscall(SYS_exit_group, fd < 0 ? 100 : 3);
    }
    wait_exit((pid_t)pid, 3);
    create_file(p);
    printf("child %ld\n", pid);
    return 0;
}
