// The guardian's limits said on qk's side: it cannot answer, and a cgroup it cannot hold would be left
// running if qk were killed, so registering one it cannot hold is an Error, never a silent drop.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "qk/record/guardian.hpp"

using namespace qk::record;

TEST_CASE("the guardian refuses a cgroup path or a count it cannot hold, and forgets what it held",
          "[record][guardian]")
{
    // Paths under a directory that does not exist: the guardian kills and removes nothing there.
    const std::string base = "/nonexistent-qk-guardian-test/qk/task-";
    auto too_long = guardian::watch_cgroup(base + std::string(600, 'x'));
    REQUIRE_FALSE(too_long);
    CHECK_THAT(too_long.error().message, Catch::Contains("holds paths under 512 bytes"));

    std::vector<std::string> held;
    for (int i = 0; i < 512; ++i) {
        held.push_back(base + std::to_string(i));
        REQUIRE(guardian::watch_cgroup(held.back()));
    }
    auto one_more = guardian::watch_cgroup(base + "513");
    REQUIRE_FALSE(one_more);
    CHECK_THAT(one_more.error().message, Catch::Contains("512 task cgroups at once") && Catch::Contains("--parallel"));
    guardian::forget_cgroup(base + "never-held");  // nothing to forget: it frees no place
    CHECK_FALSE(guardian::watch_cgroup(base + "513"));
    guardian::forget_cgroup(held.back());
    CHECK(guardian::watch_cgroup(base + "513"));
    guardian::forget_cgroup(base + "513");
    held.pop_back();
    for (const std::string& p : held)
        guardian::forget_cgroup(p);
}
