#include "syscall_filter.hpp"

#include <seccomp.h>

#include <memory>

namespace qk::sandbox_exec {

Step refuse_io_uring()
{
    std::unique_ptr<void, decltype(&seccomp_release)> filter(seccomp_init(SCMP_ACT_ALLOW), &seccomp_release);
    if (!filter)
        return setup_error("seccomp", "cannot make a seccomp filter", ENOMEM);
    for (int call : {SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register)})
        if (int err = seccomp_rule_add(filter.get(), SCMP_ACT_ERRNO(ENOSYS), call, 0); err < 0)
            return setup_error("seccomp", "cannot refuse io_uring in a seccomp filter", -err);
    if (int err = seccomp_load(filter.get()); err < 0)
        return setup_error("seccomp", "cannot install the seccomp filter that refuses io_uring", -err);
    return std::nullopt;
}

}  // namespace qk::sandbox_exec
