#include "setup_error.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace qk::sandbox_exec {

namespace {

// A field of /proc/self/status ("Seccomp", "CapEff"), as its text; "" when absent.
std::string status_field(const char* name)
{
    std::FILE* f = std::fopen("/proc/self/status", "re");
    if (!f)
        return {};
    char line[256];
    std::string out;
    const std::size_t n = std::strlen(name);
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, name, n) == 0 && line[n] == ':') {
            out = line + n + 1;
            out.erase(0, out.find_first_not_of(" \t"));
            out.erase(out.find_last_not_of(" \t\n") + 1);
            break;
        }
    (void)std::fclose(f);  // opened for reading: nothing to lose
    return out;
}

}  // namespace

int sysctl_value(const char* path)
{
    std::FILE* f = std::fopen(path, "re");
    if (!f)
        return -1;
    // One line, a whole number: anything else is -1 (fscanf would take "12abc" as 12 and overflow silently).
    int v = -1;
    char line[32] = {};
    if (std::fgets(line, sizeof line, f)) {
        const char* last = line + std::strcspn(line, "\n");
        if (auto [end, ec] = std::from_chars(line, last, v); ec != std::errc() || end != last)
            v = -1;
    }
    (void)std::fclose(f);  // opened for reading: nothing to lose
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
    // Docker's and Podman's default profiles refuse unshare to a process without CAP_SYS_ADMIN.
    if (status_field("Seccomp") == "2")
        return "; a seccomp filter is in force (Seccomp: 2 in /proc/self/status), as a container runtime's default "
               "profile, and may refuse new namespaces: run the container with a profile that allows unshare, or "
               "keep Landlock alone";
    constexpr unsigned long long kCapSysAdmin = 1ULL << 21;
    // strtoull, not stoull: an odd field must not throw in a helper that reports why it failed.
    std::string caps = status_field("CapEff");
    if (!caps.empty() && (std::strtoull(caps.c_str(), nullptr, 16) & kCapSysAdmin) == 0)
        return "; CAP_SYS_ADMIN is not in this process's capabilities (as in a default container), which a mount "
               "namespace needs of root";
    return "; a seccomp filter or a security module may refuse new namespaces";
}

}  // namespace qk::sandbox_exec
