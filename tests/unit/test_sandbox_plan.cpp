// The files between qk and qk-sandbox-exec: the plan, the result and the probe report, each read back
// exactly as written (paths with any byte but NUL), and a bad one refused naming its line.
#include <catch2/catch.hpp>

#include "qk/enforce/probe.hpp"
#include "qk/enforce/sandbox_plan.hpp"

using namespace qk::enforce;

TEST_CASE("a plan reads back as written, whatever its paths hold", "[enforce][plan]")
{
    SandboxPlan plan;
    plan.root = "/work/ws with space";
    plan.overlay = true;
    plan.upper = "/var/tmp/qk/run-1/cmd-1/upper";
    plan.work = "/var/tmp/qk/run-1/cmd-1/work";
    plan.binds = {".git", ".qk", "packages/a/node_modules", "tab\there"};
    plan.grants = {{"src", SandboxPlan::Grant::Access::read},
                   {"dist", SandboxPlan::Grant::Access::read_write},
                   {"new\nline/back\\slash/\xc3\xa9t\xc3\xa9", SandboxPlan::Grant::Access::read}};
    plan.make_dirs = {"dist", "target/release"};
    plan.read_mask = true;
    plan.mask = "/var/tmp/qk/run-1/cmd-1/mask";
    plan.hidden = {"gen", "dist/other app"};
    plan.tmpdir = "/var/tmp/qk/run-1/cmd-1/tmp";
    plan.result = "/var/tmp/qk/run-1/cmd-1/result-0";
    plan.watch_pid = 4242;
    plan.network = SandboxPlan::Network::proxy;
    plan.proxy = "/var/tmp/qk/run-1/net proxy";
    plan.proxy_token = "0123abcd";
    auto back = decode_plan(encode(plan));
    REQUIRE(back);
    CHECK(*back == plan);

    SandboxPlan alone;
    alone.root = "/ws";
    alone.overlay = false;
    alone.user_namespace = true;
    alone.grants = {{"src", SandboxPlan::Grant::Access::read}};
    alone.network = SandboxPlan::Network::none;
    auto alone_back = decode_plan(encode(alone));
    REQUIRE(alone_back);
    CHECK(*alone_back == alone);
}

TEST_CASE("a bad plan is refused, naming the line", "[enforce][plan]")
{
    auto message = [](std::string_view text) {
        auto r = decode_plan(text);
        REQUIRE_FALSE(r);
        return r.error().message;
    };
    CHECK(message("") == "sandbox plan is empty");
    CHECK(message("qk-sandbox-plan 2\nroot\t/ws\n").starts_with("sandbox plan line 1:"));
    CHECK(message("qk-sandbox-plan 1\nroot\t/ws\noverlay\t0\ngrant\tx\tsrc\n").starts_with("sandbox plan line 4: a grant"));
    CHECK(message("qk-sandbox-plan 1\nroot\t/ws\noverlay\t0\nbind\ta\\qb\n") == "sandbox plan line 4: a bad escape in the path");
    CHECK(message("qk-sandbox-plan 1\nroot\t/ws\nfrobnicate\tx\n") == "sandbox plan line 3: unknown record \"frobnicate\"");
    CHECK(message("qk-sandbox-plan 1\nroot\t/ws\nwatch\tqk\n") == "sandbox plan line 3: watch is a pid");
    CHECK(message("qk-sandbox-plan 1\nroot\t/ws\nuserns\tyes\n") == "sandbox plan line 3: userns is 0 or 1");
    CHECK(message("qk-sandbox-plan 1\nroot\t/ws\nnetwork\tsome\n") == "sandbox plan line 3: network is none or proxy");
    CHECK(message("qk-sandbox-plan 1\nroot\t/ws\noverlay\t0\nnetwork\tproxy\n") ==
          "sandbox plan: a network through the proxy needs the proxy's socket and a token");
    CHECK(message("qk-sandbox-plan 1\noverlay\t0\n") == "sandbox plan: no absolute root");
    CHECK(message("qk-sandbox-plan 1\nroot\trelative\noverlay\t0\n") == "sandbox plan: no absolute root");
    CHECK(message("qk-sandbox-plan 1\nroot\t/ws\noverlay\t1\n") == "sandbox plan: an overlay needs upper and work");
    CHECK(message("qk-sandbox-plan 1\nroot\t/ws\noverlay\t0\nread-mask\t/m\n") ==
          "sandbox plan: a read mask needs an overlay and a directory to build it in");
}

TEST_CASE("a result reads back as written", "[enforce][plan]")
{
    SandboxResult ran;
    ran.landlock_abi = 7;
    ran.rules_added = 40;
    ran.grants_missing = 2;
    ran.exit_code = 3;
    auto back = decode_result(encode(ran));
    REQUIRE(back);
    CHECK(*back == ran);

    SandboxResult killed;
    killed.signal = 9;
    CHECK(*decode_result(encode(killed)) == killed);

    SandboxResult failed;
    failed.setup = SandboxResult::SetupFailure{"uid_map", 1, "cannot write /proc/self/uid_map:\tOperation not permitted"};
    CHECK(*decode_result(encode(failed)) == failed);

    auto bad = decode_result("qk-sandbox-result 1\nexited\tzero\n");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "sandbox result line 2: \"exited\" takes one number");
}

TEST_CASE("a probe report reads back, and says whether the overlay works", "[enforce][probe]")
{
    ProbeReport all;
    all.landlock_abi = 7;
    for (const char* stage : {"landlock", "userns", "uid_map", "mount-private", "overlay", "overlay-workspace"})
        all.steps.push_back({stage, true, 0, {}});
    auto back = decode_probe(encode(all));
    REQUIRE(back);
    CHECK(*back == all);
    CHECK(back->overlay());
    CHECK(back->landlock());
    CHECK_FALSE(back->first_failure());

    ProbeReport restricted;
    restricted.landlock_abi = 4;
    restricted.steps = {{"landlock", true, 0, {}},
                        {"userns", true, 0, {}},
                        {"uid_map", false, 1, "cannot write /proc/self/uid_map: Operation not permitted; AppArmor"}};
    auto r = decode_probe(encode(restricted));
    REQUIRE(r);
    CHECK(*r == restricted);
    CHECK_FALSE(r->overlay());
    CHECK(r->landlock());
    REQUIRE(r->first_failure());
    CHECK(r->first_failure()->stage == "uid_map");

    // The overlay steps not tried at all (the probe ended early) do not make an overlay.
    ProbeReport partial;
    partial.landlock_abi = 7;
    partial.steps = {{"landlock", true, 0, {}}, {"userns", true, 0, {}}};
    CHECK_FALSE(partial.overlay());

    // A read mask that does not work leaves the overlay usable: enforce allows reads grant by grant.
    ProbeReport no_mask = all;
    no_mask.steps.push_back({"read-mask", false, 95, "cannot mark d opaque in the sandbox's view"});
    CHECK(no_mask.overlay());
    CHECK_FALSE(no_mask.read_mask());
    all.steps.push_back({"read-mask", true, 0, {}});
    CHECK(all.read_mask());
    CHECK_FALSE(restricted.read_mask());

    // The run's mirror (root): one that does not work costs time, not the overlay nor the mask, and is no
    // reason to hold tasks by Landlock alone.
    CHECK_FALSE(all.mirror());
    ProbeReport no_mirror = all;
    no_mirror.steps.push_back({"mirror", false, 22, "an overlay did not follow the read mask's redirect"});
    CHECK(no_mirror.overlay());
    CHECK(no_mirror.read_mask());
    CHECK_FALSE(no_mirror.mirror());
    CHECK_FALSE(no_mirror.first_failure());
    all.steps.push_back({"mirror", true, 0, {}});
    CHECK(all.mirror());
    CHECK_FALSE(no_mask.mirror());

    CHECK_FALSE(decode_probe("landlock ok\n"));                      // no ABI line
    CHECK_FALSE(decode_probe("landlock-abi 7\nuserns maybe\n"));     // neither ok nor failed
    CHECK_FALSE(decode_probe("landlock-abi x\n"));
}
