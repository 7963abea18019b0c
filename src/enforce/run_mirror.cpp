#include "qk/enforce/run_mirror.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <fmt/format.h>

#include "qk/enforce/read_mask.hpp"

namespace qk::enforce {

Result<RunMirror> RunMirror::create(const std::string& root)
{
    UniqueFd fs(::fsopen("tmpfs", FSOPEN_CLOEXEC));
    if (!fs.valid())
        return sys_error("cannot open a tmpfs for the run's mirror of the workspace");
    // Stand-ins are sparse: the mirror takes inodes and no pages, whatever the files' sizes.
    if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "mode", "0755", 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "size", "64m", 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        return sys_error("cannot make a tmpfs for the run's mirror of the workspace");
    UniqueFd mount(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
    if (!mount.valid())
        return sys_error("cannot mount the tmpfs of the run's mirror of the workspace");
    QK_TRY(counts, build_mirror(root, mount.get(), {kStandInOwner, kStandInOwner}));
    return RunMirror(std::move(mount), counts->stand_ins + counts->refused_dirs);
}

std::string RunMirror::layer_path() const { return fmt::format("/proc/{}/fd/{}", ::getpid(), mount_.get()); }

}  // namespace qk::enforce
