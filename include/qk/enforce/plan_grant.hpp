// The one conversion from what the rule builder allows (rules::Grant) to what the helper opens
// (SandboxPlan::Grant). The plan's grant is its own type because qk-sandbox-exec knows the plan and not
// the rules (scripts/check-layers); every grant reaches a plan through here.
#pragma once

#include "qk/enforce/sandbox_plan.hpp"
#include "qk/rules/rules.hpp"

namespace qk::enforce {

// `g`'s path and access. Whether it is a directory and why it is allowed stay with the rules: the helper
// opens the path as it finds it on the merged tree.
SandboxPlan::Grant plan_grant(const rules::Grant& g);

}  // namespace qk::enforce
