// The network in the sandbox summary and report: under audit, what a task reached that its declaration
// allows (listed, not counted), its own loopback apart, what a declared false or list does not name
// (counted, with what to declare); under enforce, the hosts the run's proxy refused, per task and once for
// the run; and the report's connections written and read back.
#include <catch2/catch.hpp>

#include "qk/report/report_reader.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/report/sandbox_summary.hpp"

using namespace qk::audit;
using Strings = std::vector<std::string>;

namespace {

std::string summary_of(std::vector<TaskAudit> tasks, const std::string& mode = "audit")
{
    RunAudit run;
    run.mode = mode;
    run.recorder = "ebpf";
    run.tasks = std::move(tasks);
    run.finish();
    return qk::report::sandbox_summary(run);
}

TaskFindings reached(Strings open, Strings loopback, Strings undeclared)
{
    TaskFindings f;
    f.network = std::move(open);
    f.loopback_network = std::move(loopback);
    f.undeclared_network = std::move(undeclared);
    return f;
}

}  // namespace

TEST_CASE("network summary: what the declarations allow is said once for the run, not counted; loopback apart",
          "[report][sandbox-report][network]")
{
    std::string text = summary_of({
        {"app:build", TaskStatus::audited, "", reached({"registry.npmjs.org:443"}, {"127.0.0.1:5432", "[::1]:8080"}, {})},
        {"app:test", TaskStatus::audited, "", reached({}, {"127.0.0.1:5432"}, {})},
        {"lib:build", TaskStatus::audited, "", reached({"registry.npmjs.org:443"}, {}, {})},
    });
    CHECK(text == "Sandbox audit: 3 tasks kept to what they declare\n"
                  "  reached on the network, which the declared networks allow: registry.npmjs.org:443 (2 tasks: "
                  "app:build, lib:build)\n"
                  "  reached on their own machine (loopback), not judged: 127.0.0.1:5432 (2 tasks: app:build, "
                  "app:test), [::1]:8080 (1 task: app:build)\n");
}

TEST_CASE("network summary: hosts outside a declared false or list go beyond, with the declaration to add",
          "[report][sandbox-report][network]")
{
    std::string text =
        summary_of({{"app:build", TaskStatus::audited, "", reached({"registry.npmjs.org:443"}, {}, {"evil.test:443"})}});
    CHECK(text == "Sandbox audit: 1 of 1 task went beyond what it declares\n"
                  "  app:build\n"
                  "    1 host reached outside its declared network:\n"
                  "      evil.test:443\n"
                  "    what to declare in its target:\n"
                  "      \"qk:sandbox\": {\"network\": [\"evil.test:443\"]} (added to its list)\n"
                  "  reached on the network, which the declared networks allow: registry.npmjs.org:443 (1 task: "
                  "app:build)\n");
}

TEST_CASE("network summary: under enforce the refused hosts are named per task and once for the run",
          "[report][sandbox-report][network]")
{
    TaskFindings a;
    a.refused_network = {"127.0.0.1:9999", "evil.test:443"};
    TaskFindings b;
    b.refused_network = {"evil.test:443"};
    TaskAudit app{"app:fetch", TaskStatus::enforced, "", a};
    app.failed = true;
    TaskAudit lib{"lib:fetch", TaskStatus::enforced, "", b};
    std::string text = summary_of({app, lib}, "enforce");
    CHECK(text == "Sandbox enforce: 2 of 2 tasks did what their declarations refuse\n"
                  "  app:fetch (failed)\n"
                  "    2 connections refused by its declared network; to allow them, add their host:port to its "
                  "\"qk:sandbox\": {\"network\": [...]}:\n"
                  "      127.0.0.1:9999\n"
                  "      evil.test:443\n"
                  "  lib:fetch\n"
                  "    1 connection refused by its declared network; to allow it, add its host:port to its "
                  "\"qk:sandbox\": {\"network\": [...]}:\n"
                  "      evil.test:443\n"
                  "  2 hosts refused by declared networks: 127.0.0.1:9999 (app:fetch), evil.test:443 (app:fetch, "
                  "lib:fetch)\n");
}

TEST_CASE("network report: the connections behind each entry are written and read back", "[report][sandbox-report][network]")
{
    TaskFindings f = reached({"registry.npmjs.org:443"}, {"127.0.0.1:53"}, {"192.0.2.1:9"});
    f.connections = {{"127.0.0.1:53", "127.0.0.1", 53, true, "", 3, true},
                     {"192.0.2.1:9", "192.0.2.1", 9, true, "", 1, true},
                     {"registry.npmjs.org:443", "104.16.0.1", 443, false, "registry.npmjs.org", 2, false}};
    RunAudit run;
    run.run = {"1", "QK_RUN_ID", std::nullopt, {std::nullopt}};
    run.recorder = "strace";
    run.tasks.push_back({"app:build", TaskStatus::audited, "", f});
    run.finish();
    const std::string json = qk::report::sandbox_report_json(run);
    std::string compact = json;  // the report is indented; no name here holds a space
    std::erase_if(compact, [](char c) { return c == ' ' || c == '\n'; });
    CHECK_THAT(compact, Catch::Contains(R"("undeclaredNetwork":["192.0.2.1:9"])"));
    CHECK_THAT(compact, Catch::Contains(R"({"entry":"registry.npmjs.org:443","address":"104.16.0.1","port":443,)"
                                        R"("protocol":"tcp","host":"registry.npmjs.org","count":2,"reached":false})"));
    auto back = qk::report::read_sandbox_report(json, "r.json");
    if (!back)
        FAIL(back.error().message);
    REQUIRE(back->tasks.size() == 1);
    CHECK(back->tasks[0].findings.connections == f.connections);
    CHECK(back->tasks[0].findings.undeclared_network == Strings{"192.0.2.1:9"});
    CHECK(back->counts.went_beyond == 1);

    // A connection that is not one is said where it is.
    std::string bad = json;
    bad.replace(bad.find(R"("tcp")"), 5, R"("sctp")");  // the one TCP connection, the third
    auto refused = qk::report::read_sandbox_report(bad, "r.json");
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("connections/2/protocol"));
}
