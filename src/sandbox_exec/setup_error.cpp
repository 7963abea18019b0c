#include "setup_error.hpp"

#include <cstdio>

namespace qk::sandbox_exec {

int sysctl_value(const char* path)
{
    std::FILE* f = std::fopen(path, "re");
    if (!f)
        return -1;
    int v = -1;
    if (std::fscanf(f, "%d", &v) != 1)
        v = -1;
    std::fclose(f);
    return v;
}

std::string userns_hint()
{
    if (sysctl_value("/proc/sys/user/max_user_namespaces") == 0)
        return "; user namespaces are disabled here: sysctl user.max_user_namespaces=0 (set it above 0)";
    if (sysctl_value("/proc/sys/kernel/unprivileged_userns_clone") == 0)
        return "; unprivileged user namespaces are disabled: sysctl kernel.unprivileged_userns_clone=0 (set it to 1)";
    if (sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
        return "; AppArmor restricts unprivileged user namespaces (sysctl "
               "kernel.apparmor_restrict_unprivileged_userns=1): give qk-sandbox-exec an AppArmor profile that allows "
               "userns, or set the sysctl to 0";
    return "; a seccomp filter (as a container runtime's default) may refuse user namespaces";
}

}  // namespace qk::sandbox_exec
