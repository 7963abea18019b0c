// The table of finding kinds against everything that reads it or restates it: what TaskFindings says of
// a finding of each kind, the suggestions, rejudge, the report's round trip, the schemas and the table in
// docs/sandbox.md. A kind added to the table and missed by any of them fails here.
#include <simdjson.h>

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "qk/audit/finding_kinds.hpp"
#include "qk/audit/rejudge.hpp"
#include "qk/audit/suggestions.hpp"
#include "qk/report/report_reader.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/report/sandbox_summary.hpp"
#include "rules_workspace.hpp"

using namespace qk::audit;
using Names = std::set<std::string>;

namespace
{

// Findings holding one path of `kind` and nothing else.
TaskFindings one_of(const FindingKind& kind, const std::string& path = "other/x.txt")
{
    TaskFindings f;
    if (kind.list)
        (f.*kind.list).push_back(path);
    else
        f.dependency_reads["lib"].push_back(path);
    return f;
}

std::string read_text(const std::string& relative)
{
    std::ifstream in(std::string(QK_SOURCE_DIR) + "/" + relative);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

Names names_where(bool (*keep)(const FindingKind&))
{
    Names out;
    for (const FindingKind& k : finding_kinds())
        if (keep(k))
            out.insert(k.name);
    return out;
}

} // namespace

TEST_CASE("finding kinds: each row says what TaskFindings says of a finding of its kind", "[audit][finding-kinds]")
{
    // No count of rows here: the build ties them to TaskFindings' lists (finding_kinds.cpp's static_assert),
    // and classify's switch over rules::Finding, which has no default, to those lists.
    for (const FindingKind& k : finding_kinds()) {
        INFO(k.name);
        TaskFindings f = one_of(k);
        CHECK(k.in(f));
        CHECK_FALSE(f.empty());
        CHECK(f.went_beyond() == k.beyond);
        CHECK(f.refused() == k.refusal);
        CHECK(finding_kind_named(k.name) == &k);
        if (k.list)
            CHECK(&finding_kind(k.list) == &k);
        // The audit's kinds count as going beyond exactly when enforce refuses them: one answer to both.
        if (k.run == KindRun::audit)
            CHECK(k.beyond == !qk::rules::enforce_allows(k.rule));
        else
            CHECK(k.rule == qk::rules::Finding::none);
        TaskAudit t{"app:build", TaskStatus::audited, "", f};
        t.project_root = "app";
        CHECK(verified(t) == k.whole);
    }
    CHECK(finding_kind_named("nonsense") == nullptr);
    // strayWrites' second list, writes in .git: listed and no clean task, but enforce allows them.
    TaskFindings git;
    git.git_writes = {".git/index"};
    CHECK(finding_kind(&TaskFindings::stray_writes).also == &TaskFindings::git_writes);
    CHECK(finding_kind(&TaskFindings::stray_writes).held(git));
    CHECK_FALSE(git.empty());
    CHECK_FALSE(git.went_beyond());
    CHECK_FALSE(git.refused());
}

TEST_CASE("finding kinds: a kind with a place to declare it gets a suggestion there, the others none",
          "[audit][finding-kinds]")
{
    for (const FindingKind& k : finding_kinds()) {
        INFO(k.name);
        TaskAudit t{"app:build", TaskStatus::audited, "",
                    one_of(k, k.list == &TaskFindings::unkeyed_packages || k.list == &TaskFindings::hoisted_packages
                                  ? "left-pad"
                                  : "app/src/x.ts")};
        t.project_root = "app";
        t.dependency_roots["lib"] = "lib";
        std::vector<Suggestion> given = suggest(t, nullptr);
        if (!k.declare) {
            CHECK(given.empty());
            continue;
        }
        REQUIRE(given.size() == 1);
        CHECK(given[0].finding == k.name);
        CHECK(given[0].declare == k.declare);
    }
}

TEST_CASE("finding kinds: the audit's summary lists a kind under its task where its row says",
          "[audit][finding-kinds]")
{
    for (const FindingKind& k : finding_kinds()) {
        INFO(k.name);
        RunAudit run;
        run.recorder = "strace";
        run.tasks.push_back({"app:build", TaskStatus::audited, "", one_of(k)});
        run.finish();
        const std::string summary = qk::report::sandbox_summary(run, {});
        // The others are said on lines of their own, each tested where it is written.
        if (k.summary == SummaryAs::apart)
            continue;
        const std::string line = k.summary == SummaryAs::projects ? fmt::format("{}: lib (1 file)\n", k.words)
                                                                  : finding_count(k, 1);
        CHECK_THAT(summary, Catch::Contains("  app:build\n    " + line));
    }
}

TEST_CASE("finding kinds: rejudge asks each kind as its row says", "[audit][finding-kinds]")
{
    qk::test::RulesWorkspace ws;
    auto rules = ws.rules_of("app:build");
    REQUIRE(rules);
    for (const FindingKind& k : finding_kinds()) {
        INFO(k.name);
        TaskFindings found = one_of(k, k.rejudge == Rejudge::kept ? "left-pad" : "other/notes.txt");
        Rejudged r = rejudge(found, *rules, ws.dir.path.string());
        const bool placed = k.in(r.still) || k.in(r.covered) || k.in(r.allowed);
        CHECK(placed == (k.rejudge != Rejudge::none));
        CHECK((r.not_rejudged == std::vector<std::string>{k.name}) == (k.rejudge == Rejudge::kept));
    }
}

TEST_CASE("finding kinds: the report writes each kind by its name and reads it back", "[audit][finding-kinds]")
{
    for (const FindingKind& k : finding_kinds()) {
        INFO(k.name);
        RunAudit run;
        run.run = {"812-1", "GITHUB_RUN_ID", std::nullopt, {"3"}};
        run.recorder = "strace";
        run.tasks.push_back({"app:build", TaskStatus::audited, "", one_of(k)});
        run.finish();
        const std::string json = qk::report::sandbox_report_json(run);
        CHECK_THAT(json, Catch::Contains(fmt::format("\"{}\":", k.name)));
        auto back = qk::report::read_sandbox_report(json, "report.json");
        if (!back)
            FAIL(back.error().message);
        REQUIRE(back->tasks.size() == 1);
        CHECK(k.in(back->tasks[0].findings));
    }
}

TEST_CASE("finding kinds: the schemas name every kind, and suggestions for those with a place",
          "[audit][finding-kinds]")
{
    const Names all = names_where([](const FindingKind&) { return true; });
    const Names declared = names_where([](const FindingKind& k) { return k.declare != nullptr; });
    for (const char* schema : {"schemas/sandbox-report.schema.json", "schemas/run-report.schema.json"}) {
        INFO(schema);
        simdjson::dom::parser parser;
        const std::string text = read_text(schema);
        simdjson::dom::element doc = parser.parse(text).value();
        Names properties;
        simdjson::dom::object kinds = doc["$defs"]["findings"]["properties"].get_object().value();
        for (auto [key, value] : kinds)
            properties.emplace(key);
        CHECK(properties == all);
    }
    simdjson::dom::parser parser;
    const std::string text = read_text("schemas/sandbox-report.schema.json");
    simdjson::dom::element doc = parser.parse(text).value();
    Names findings;
    simdjson::dom::array answered =
        doc["$defs"]["task"]["properties"]["suggestions"]["items"]["properties"]["finding"]["enum"].get_array().value();
    for (simdjson::dom::element name : answered)
        findings.emplace(name.get_string().value());
    CHECK(findings == declared);
}

TEST_CASE("finding kinds: docs/sandbox.md's table lists the audit's kinds, and says which go beyond",
          "[audit][finding-kinds]")
{
    const std::string docs = read_text("docs/sandbox.md");
    REQUIRE_FALSE(docs.empty());
    // The rows of the table under "What the audit reports": "| `name` | what | counted as going beyond | ..."
    std::map<std::string, std::string> rows;
    std::istringstream lines(docs.substr(docs.find("| kind (`--sandbox-report`) |")));
    for (std::string line; std::getline(lines, line) && line.starts_with("|");) {
        if (!line.starts_with("| `"))
            continue;
        const std::string name = line.substr(3, line.find('`', 3) - 3);
        std::size_t third = line.find(" | ", line.find(" | ", 2) + 3);
        rows[name] = line.substr(third + 3, line.find(" | ", third + 3) - third - 3);
    }
    Names in_docs;
    for (const auto& [name, beyond] : rows)
        in_docs.insert(name);
    CHECK(in_docs == names_where([](const FindingKind& k) { return k.run == KindRun::audit; }));
    for (const auto& [name, beyond] : rows) {
        INFO(name << ": " << beyond);
        if (const FindingKind* k = finding_kind_named(name))
            CHECK(beyond.starts_with("yes") == k->beyond);
    }
    // Enforce's kinds are said where enforce's report is.
    for (const FindingKind& k : finding_kinds())
        if (k.run == KindRun::enforce)
            CHECK_THAT(docs, Catch::Contains(fmt::format("`{}`", k.name)));
}
