#include "qk/util/fork_into_cgroup.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace qk {

pid_t fork_into_cgroup(int cgroup_fd, bool& join_in_child)
{
    struct clone_args args {};
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<unsigned>(cgroup_fd);
    auto pid = static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof(args)));
    if (pid < 0 && (errno == ENOSYS || errno == EINVAL || errno == E2BIG)) {
        // Older kernel: fork, then join the cgroup before exec.
        join_in_child = true;
        return ::fork();
    }
    return pid;
}

bool join_cgroup(int cgroup_fd)
{
    int procs = ::openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);  // closed by the exec that follows
    return procs >= 0 && ::write(procs, "0", 1) == 1;
}

}  // namespace qk
