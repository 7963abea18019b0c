// The report page's data: the table of finding kinds it reads (the summary's words, and which kinds make
// a task go beyond), and the report put in the page so that no path can end its element.
#include <simdjson.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "qk/audit/finding_kinds.hpp"
#include "qk/report/report_page.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/report/sandbox_summary.hpp"

using namespace qk::audit;
using qk::audit::finding_count;
using qk::audit::finding_kind;
using qk::audit::finding_kinds;
using qk::audit::finding_words;

TEST_CASE("every kind of finding has words, counted in the right number", "[report][report-page]")
{
    std::set<std::string> names;
    for (const auto& k : finding_kinds()) {
        INFO(k.name);
        CHECK(names.insert(k.name).second);
        CHECK(std::string(k.words).size() > 3);
        CHECK((*k.one == '\0') == (*k.many == '\0'));
        if (k.list)
            CHECK(&finding_kind(k.list) == &k);
    }
    const auto& reads = finding_kind(&TaskFindings::reads_outside_inputs);
    CHECK(finding_count(reads, 1) == "1 read outside its inputs");
    CHECK(finding_count(reads, 3) == "3 reads outside its inputs");
    CHECK(finding_words(reads) == "reads outside its inputs");
    const auto& writes = finding_kind(&TaskFindings::stray_writes);
    CHECK(finding_count(writes, 2) == "2 written outside its outputs");
    CHECK(finding_words(writes) == "written outside its outputs");
    CHECK(finding_count(finding_kind(&TaskFindings::tsconfig_reads), 1) ==
          "1 TypeScript configuration read outside its inputs");
}

TEST_CASE("the summary counts a kind in the table's words", "[report][report-page]")
{
    RunAudit audit;
    TaskFindings f;
    f.reads_outside_inputs = {"a.txt", "b.txt"};
    f.stray_writes = {"out.log"};
    audit.tasks.push_back({"app:build", TaskStatus::audited, "", f});
    audit.recorder = "ebpf";
    audit.finish();
    const std::string summary = qk::report::sandbox_summary(audit);
    CHECK_THAT(summary, Catch::Contains(finding_count(finding_kind(&TaskFindings::reads_outside_inputs), 2) + ":"));
    CHECK_THAT(summary, Catch::Contains(finding_count(finding_kind(&TaskFindings::stray_writes), 1) + ":"));
}

TEST_CASE("the page's kinds are the table's, with which make a task go beyond", "[report][report-page]")
{
    simdjson::dom::parser parser;
    const std::string json = qk::report::finding_kinds_json();
    simdjson::dom::array kinds = parser.parse(json).get_array().value();
    REQUIRE(kinds.size() == finding_kinds().size());
    std::size_t i = 0;
    std::set<std::string> beyond;
    for (simdjson::dom::element k : kinds) {
        const auto& row = finding_kinds()[i++];
        CHECK(std::string(k["name"].get_string().value()) == row.name);
        CHECK(std::string(k["words"].get_string().value()) == row.words);
        CHECK(std::string(k["many"].get_string().value()) == row.many);
        if (k["beyond"].get_bool().value())
            beyond.insert(row.name);
    }
    // Reads and writes beyond the declarations count; what enforce allows, or only notes, does not.
    CHECK(beyond.contains("readsOutsideInputs"));
    CHECK(beyond.contains("strayWrites"));
    CHECK(beyond.contains("dependencyReads"));
    CHECK(beyond.contains("refusedReads"));
    CHECK_FALSE(beyond.contains("temporaryFiles"));
    CHECK_FALSE(beyond.contains("unkeyedReads"));
    CHECK_FALSE(beyond.contains("hoistedPackages"));
    CHECK_FALSE(beyond.contains("replacedReads"));
    // The network as the spec keeps it: open and listed, the machine's own apart; only what a declared false
    // or list does not name counts.
    CHECK(beyond.contains("undeclaredNetwork"));
    CHECK_FALSE(beyond.contains("network"));
    CHECK_FALSE(beyond.contains("loopbackNetwork"));
}

TEST_CASE("the page holds the kinds and the report, and a path cannot close their elements", "[report][report-page]")
{
    RunAudit audit;
    TaskFindings f;
    f.reads_outside_inputs = {"</script><b id=evil>.txt"};
    audit.tasks.push_back({"app:build", TaskStatus::audited, "", f});
    audit.finish();
    const std::string page = qk::report::report_page(audit);
    CHECK(page.find("/*QK_FINDING_KINDS*/") == std::string::npos);
    CHECK(page.find("/*QK_REPORT_DATA*/") == std::string::npos);
    CHECK_THAT(page, Catch::Contains("\"words\":\"outside its inputs\""));
    CHECK_THAT(page, Catch::Contains("\\u003c/script>\\u003cb id=evil>.txt"));
    CHECK(page.find("</script><b id=evil>") == std::string::npos);
}
