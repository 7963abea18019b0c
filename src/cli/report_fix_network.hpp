// What qk report fix writes for hosts a task reached outside its declared network (undeclaredNetwork):
// the target's "qk:sandbox": {"network": [...]} holding them, in the file defining the target. A list is
// added to; false (or no declaration of its own, taking false or a list from targetDefaults or nx.json)
// becomes a list of the hosts it reached, after those it took. Asked for (--declare-network), a target
// that declares nothing is given the list of hosts it reached (network findings).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qk/workspace/workspace.hpp"
#include "report_fix_plan.hpp"

namespace qk::cli {

// The edit of `file` (the one defining the target) adding `entries` ("host:port") to the target's network,
// less those its declaration allows already; nullopt when none is left.
std::optional<FixEdit> network_edit(const workspace::Project& project, const workspace::Target& target,
                                    const std::string& file, const std::vector<std::string>& entries);

}  // namespace qk::cli
