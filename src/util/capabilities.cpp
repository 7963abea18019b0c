#include "qk/util/capabilities.hpp"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace qk {

bool has_capability(int cap)
{
    struct __user_cap_header_struct header {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] {};
    if (::syscall(SYS_capget, &header, data) != 0)
        return false;
    return (data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap)) != 0;
}

}  // namespace qk
