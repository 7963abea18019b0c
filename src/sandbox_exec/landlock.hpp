// The command's Landlock domain, built from the plan's grants opened on the merged tree. Reads of files
// (and execution) are held everywhere in the workspace; over an overlay, writes are not (the overlay holds
// them, and they are judged when the task ends), under Landlock alone they are. Listing directories is
// never held, so tools that climb the tree do not break. Outside the workspace everything stays open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "qk/enforce/sandbox_plan.hpp"
#include "qk/enforce/landlock_abi.hpp"
#include "setup_error.hpp"

namespace qk::sandbox_exec {

struct LandlockCounts {
    int abi = 0;
    std::size_t rules = 0;
    std::size_t missing = 0;  // grants gone, or behind a link, when they were opened
};

// Builds the ruleset and restricts this thread (no_new_privs set first). `counts` is filled as far as it got.
// `proxy_port` (not 0): the run's proxy on the command's loopback, the one TCP port it may connect to where
// Landlock holds TCP (ABI 4, Linux 6.7): a second wall behind its network namespace.
Step restrict_self(const enforce::SandboxPlan& plan, LandlockCounts& counts, std::uint16_t proxy_port = 0);

}  // namespace qk::sandbox_exec
