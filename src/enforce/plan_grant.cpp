#include "qk/enforce/plan_grant.hpp"

namespace qk::enforce {

SandboxPlan::Grant plan_grant(const rules::Grant& g)
{
    using Access = SandboxPlan::Grant::Access;
    Access access = Access::read;
    switch (g.access) {  // no default: an access rules grows is a compiler warning here (-Wswitch)
    case rules::Grant::Access::read:
        access = Access::read;
        break;
    case rules::Grant::Access::read_write:
        access = Access::read_write;
        break;
    }
    return {g.path, access};
}

}  // namespace qk::enforce
