// What enforce can use on this machine, found by trying it (qk-sandbox-exec --probe): a sysctl can read
// permissive while the first privileged step in a user namespace fails (Ubuntu's AppArmor), so only a
// functional test decides. Asked once per run, and by qk doctor.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::enforce {

struct ProbeStep {
    std::string stage;  // "landlock", "userns", "uid_map", "mount-private", "overlay", "overlay-workspace",
                        // "read-mask" (tried last; its failure leaves the overlay usable), "netns"
                        // (the network namespace; its failure leaves the overlay usable)
    bool ok = false;
    int error = 0;        // errno when it failed
    std::string message;  // what failed and why, and the fix when one is known (a sysctl, an AppArmor profile)
    friend bool operator==(const ProbeStep&, const ProbeStep&) = default;
};

struct ProbeReport {
    int landlock_abi = 0;  // 0: no Landlock (not built, or disabled at boot)
    std::vector<ProbeStep> steps;  // in the order tried; the first failure ends the overlay steps

    bool landlock() const { return landlock_abi > 0; }
    // Whether commands can run over an overlay of the workspace (user and mount namespace, overlay).
    bool overlay() const;
    // Whether a read mask (read_mask.hpp) hides what it should in such an overlay: without it, enforce
    // allows reads file by file through Landlock, and what a task creates outside those is refused.
    bool read_mask() const;
    // As root: whether an overlay mounted by the host's root follows a read mask's redirects into a mirror
    // of the workspace (run_mirror.hpp); without it each command mirrors refused directories itself.
    bool mirror() const;
    // Whether a command can have a network namespace of its own with its loopback up (step "netns", tried
    // in the user namespace the overlay steps make): without it a task that declares its network (false or
    // a list) is refused under enforce rather than run open.
    bool network_namespace() const;
    // The first failed step, for "held by Landlock alone because ..." (nullopt when all passed).
    std::optional<ProbeStep> first_failure() const;

    friend bool operator==(const ProbeReport&, const ProbeReport&) = default;
};

// The probe's output is one step a line: "<stage> ok", "<stage> failed <errno> <message>", and
// "landlock-abi <n>".
std::string encode(const ProbeReport& report);
Result<ProbeReport> decode_probe(std::string_view text);

// Runs `helper --probe <workspace_root> <scratch_dir>` (scratch_dir: an empty directory outside the
// workspace on its filesystem, for the overlay's test layers; what the probe makes there is left for the
// caller to remove, with the directory) and reads its report.
Result<ProbeReport> probe(const std::string& helper, const std::string& workspace_root,
                          const std::string& scratch_dir);

}  // namespace qk::enforce
