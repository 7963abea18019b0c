#include "qk/enforce/landlock_abi.hpp"

#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace qk::enforce {

int landlock_abi(int* why)
{
    long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0) {
        if (why)
            *why = errno;
        return 0;
    }
    return static_cast<int>(abi);
}

}  // namespace qk::enforce
