// plan_grant: what the rule builder allows reaches the helper's plan with its path and access, each
// access to its own (a read grant that became read-write would let a task write an input).
#include <catch2/catch.hpp>

#include "qk/enforce/plan_grant.hpp"

using qk::enforce::plan_grant;
using qk::enforce::SandboxPlan;
using qk::rules::Grant;

TEST_CASE("plan_grant keeps the path and maps each access to its own", "[enforce][plan]")
{
    Grant read{"packages/app/src", Grant::Access::read, true, qk::rules::PathClass::input};
    CHECK(plan_grant(read) == SandboxPlan::Grant{"packages/app/src", SandboxPlan::Grant::Access::read});
    Grant write{"dist/out.js", Grant::Access::read_write, false, qk::rules::PathClass::output};
    CHECK(plan_grant(write) == SandboxPlan::Grant{"dist/out.js", SandboxPlan::Grant::Access::read_write});
    Grant root{"", Grant::Access::read, true, qk::rules::PathClass::input};
    CHECK(plan_grant(root).path.empty());
}
