// Scenario: clone3(2) (raw syscall, no glibc wrapper) creating a child process (no CLONE_VM: a copy,
// like fork). The child creates child.txt and exits 3; the parent waits, then creates parent.txt.
// argv[1]: a fresh directory.
//   child:  open(child.txt, O_CREAT|O_EXCL|O_WRONLY)  -> created, written child.txt
//   parent: open(parent.txt, O_CREAT|O_EXCL|O_WRONLY) -> created, written parent.txt
// Prints "pid <pid>" and "child <pid>" on stdout.
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char c[8192], p[8192];
    snprintf(c, sizeof c, "%s/child.txt", argv[1]);
    snprintf(p, sizeof p, "%s/parent.txt", argv[1]);
    printf("pid %d\n", getpid());
    fflush(stdout);
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0) {
        perror("clone3");
        return 101;
    }
    if (pid == 0) {
        // Raw syscalls only in the child: it was not created through glibc.
        long fd = syscall(SYS_openat, AT_FDCWD, c, O_WRONLY | O_CREAT | O_EXCL, 0644);
        syscall(SYS_exit_group, fd < 0 ? 100 : 3);
    }
    int st;
    if (waitpid((pid_t)pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 3)
        return 100;
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return 100;
    close(fd);
    printf("child %ld\n", pid);
    return 0;
}
