// deny-syscalls: runs a command under a seccomp filter that refuses some system calls, as a container
// runtime's default profile does, so that the fallback matrix tests (tests/e2e/test_fallback_matrix.py)
// try what qk does where those calls are refused, on this machine, without changing it for anyone else.
//
//   deny-syscalls [ptrace] [bpf] [namespaces] -- command [args...]
//
// ptrace and bpf fail with EPERM. namespaces refuses new namespaces as Docker's default profile does
// for a process without CAP_SYS_ADMIN: unshare, and clone with any CLONE_NEW* flag, fail with EPERM;
// clone3 with ENOSYS (its flags sit in memory, out of a filter's reach; callers fall back to clone).
#define _GNU_SOURCE  // NOLINT(bugprone-reserved-identifier): glibc's own switch for its GNU declarations
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int deny(scmp_filter_ctx ctx, const char *what)
{
    if (strcmp(what, "ptrace") == 0)
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ptrace), 0);
    if (strcmp(what, "bpf") == 0)
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(bpf), 0);
    if (strcmp(what, "namespaces") == 0) {
        static const unsigned long kNew[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
                                             CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
        for (size_t i = 0; rc == 0 && i < sizeof kNew / sizeof kNew[0]; ++i)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, kNew[i], kNew[i]));
        if (rc == 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        return rc;
    }
    fprintf(stderr, "deny-syscalls: unknown call '%s' (ptrace, bpf, namespaces)\n", what);
    return -EINVAL;
}

int main(int argc, char **argv)
{
    int i = 1;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        fprintf(stderr, "deny-syscalls: seccomp_init failed\n");
        return 125;
    }
    for (; i < argc && strcmp(argv[i], "--") != 0; ++i)
        if (deny(ctx, argv[i]) != 0)
            return 125;
    if (i + 1 >= argc) {
        fprintf(stderr, "usage: deny-syscalls [ptrace] [bpf] [namespaces] -- command [args...]\n");
        return 125;
    }
    int rc = seccomp_load(ctx);  // sets no_new_privs, as an unprivileged container does
    if (rc != 0) {
        fprintf(stderr, "deny-syscalls: seccomp_load: %s\n", strerror(-rc));
        return 125;
    }
    seccomp_release(ctx);
    execvp(argv[i + 1], argv + i + 1);
    fprintf(stderr, "deny-syscalls: %s: %s\n", argv[i + 1], strerror(errno));
    return 127;
}
