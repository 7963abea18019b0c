// qk doctor: what the sandbox can use on this machine, each mechanism tried rather than assumed (the
// recorders load, the probe mounts an overlay), with a one-line verdict and the fix where one fails; and
// the workspace's scratch directories checked against the rules a run would refuse them by; and the remote
// cache, where one is named, reached, written and read back as a run would.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "qk/util/settings.hpp"

namespace qk::cli {

struct DoctorCheck {
    std::string name;     // "cgroup2", "ebpf", "strace", "landlock", "userns", "overlay", "scratch"...
    bool ok = false;
    bool needed = true;   // false: informational, no mode depends on it alone
    std::string verdict;  // one line
    std::string fix;      // what to do when it failed, if known
};

struct DoctorReport {
    std::vector<DoctorCheck> checks;
    std::string audit;    // one line: how audit runs here, or why it cannot
    std::string enforce;  // likewise for enforce
    bool audit_works = false, enforce_works = false;
    bool workspace_ok = true;  // no scratch problem (true outside a workspace)
    bool remote_ok = true;     // the remote cache named answers as runs need (true when none is named)
};

// Runs every check. `directory`: where a workspace is looked for (its scratch directories checked, and
// the overlay probed over its root); outside one, the overlay is probed over `directory` itself.
// `settings`: the environment's, as a run would take them.
DoctorReport doctor(const std::filesystem::path& directory, const Settings& settings);

// The report as printed, one check a line.
std::string doctor_text(const DoctorReport& report);

}  // namespace qk::cli
