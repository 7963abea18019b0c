#include "privileges.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>

#include "qk/util/unique_fd.hpp"

namespace qk::sandbox_exec {

namespace {

// What root needs over files it may reach (a workspace checked out by another user, as in a CI container
// over the runner's checkout): reading, writing, owning, and changing owners and modes. Nothing over
// the system (admin, modules, raw I/O, ptrace, network, devices, time) and no signals beyond its uid.
constexpr int kKeptCapabilities[] = {CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER,
                                     CAP_FSETID, CAP_SETGID,      CAP_SETUID};

bool kept(int cap)
{
    return std::find(std::begin(kKeptCapabilities), std::end(kKeptCapabilities), cap) != std::end(kKeptCapabilities);
}

}  // namespace

Step drop_privileges(bool keep_dac)
{
    // The controlling terminal is given up, not the session: the command stays in the process group qk
    // signals and kills on cancel (a session of its own would take it, and all it starts, out of reach
    // under Landlock alone). Without one, TIOCSTI takes CAP_SYS_ADMIN, which no command keeps, and
    // /dev/tty cannot be opened; taking the terminal back (TIOCSCTTY) would take stealing it.
    if (UniqueFd tty(::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)); tty.valid() && ::ioctl(tty.get(), TIOCNOTTY) != 0)
        return setup_error("privileges", "cannot give up the controlling terminal");
    // The bounding set caps what any later exec may gain, a root exec included. Cutting it takes
    // CAP_SETPCAP, which a user without capabilities lacks, and does not need: it has none to drop.
    struct __user_cap_header_struct header {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] {};
    if (::syscall(SYS_capget, &header, data) != 0)
        return setup_error("privileges", "cannot read the capabilities");
    const bool can_drop = (data[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP)) != 0;
    if (can_drop)
        for (int cap = 0; cap <= CAP_LAST_CAP; ++cap)
            if ((!kept(cap) || (!keep_dac && (cap == CAP_DAC_OVERRIDE || cap == CAP_DAC_READ_SEARCH))) &&
                ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 && ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
                return setup_error("privileges", "cannot drop a capability from the bounding set");
    (void)::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    for (int i = 0; i < 2; ++i) {
        std::uint32_t keep = 0;
        for (int cap : kKeptCapabilities)
            if (CAP_TO_INDEX(cap) == i && (keep_dac || (cap != CAP_DAC_OVERRIDE && cap != CAP_DAC_READ_SEARCH)))
                keep |= CAP_TO_MASK(cap);
        data[i].effective &= keep;
        data[i].permitted &= keep;
        data[i].inheritable = 0;
    }
    if (::syscall(SYS_capset, &header, data) != 0)
        return setup_error("privileges", "cannot drop capabilities");
    return std::nullopt;
}

}  // namespace qk::sandbox_exec
