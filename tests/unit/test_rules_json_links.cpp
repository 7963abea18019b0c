// A json input whose file is a symbolic link: the spec lets the task read "their declared JSON file,
// including its symlink target". The rules allow the file the link resolves to (through a chain of
// links), enforce's walk grants it, and the audit judges a read of it allowed; a link out of the
// workspace or into .git adds nothing (everything is open there already), and nothing else is widened.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "qk/audit/classify.hpp"
#include "qk/key/session.hpp"
#include "qk/record/recording.hpp"
#include "qk/rules/rules.hpp"
#include "rules_grants_support.hpp"
#include "test_support.hpp"

using namespace qk;
using qk::test::find;
using qk::test::TempDir;
using rules::Finding;
using rules::Grant;
using rules::PathClass;

namespace {

struct JsonLinkWorkspace : qk::test::PlannedWorkspace {
    TempDir outside{"qk-json-outside"};

    JsonLinkWorkspace() : PlannedWorkspace("qk-json-links")
    {
        dir.write("packages/app/package.json", R"({ "name": "app" })");
        auto json = [](const std::string& file) {
            return R"({ "command": "true", "inputs": [{ "json": "{projectRoot}/)" + file + R"(", "fields": ["name"] }] })";
        };
        dir.write("packages/app/project.json", R"({ "name": "app", "targets": {
  "link": )" + json("config.json") + R"(,
  "chain": )" + json("chain.json") + R"(,
  "out": )" + json("out.json") + R"(,
  "git": )" + json("git.json") + R"(,
  "plain": { "command": "true", "inputs": ["{projectRoot}/src/**/*"] }
} })");
        dir.write("packages/app/src/index.ts", "export {}\n");
        dir.write("shared/config.real.json", R"({ "name": "real", "secret": 1 })");
        dir.write("shared/beside.json", R"({ "name": "beside" })");
        dir.write("shared/deeper/final.json", R"({ "name": "final" })");
        dir.write(".git/qk.json", R"({ "name": "in git" })");
        outside.write("far.json", R"({ "name": "far" })");
        namespace fs = std::filesystem;
        fs::create_symlink("../../shared/config.real.json", dir.path / "packages/app/config.json");
        // chain.json -> hop.json -> shared/hop-dir/final.json, where hop-dir is itself a link.
        fs::create_symlink("deeper", dir.path / "shared/hop-dir");
        fs::create_symlink("../../shared/hop.json", dir.path / "packages/app/chain.json");
        fs::create_symlink("hop-dir/final.json", dir.path / "shared/hop.json");
        fs::create_symlink((outside.path / "far.json").string(), dir.path / "packages/app/out.json");
        fs::create_symlink("../../.git/qk.json", dir.path / "packages/app/git.json");
        plan({"link", "chain", "out", "git", "plain"});
    }
};

}  // namespace

TEST_CASE("json link: the file it leads to is read as the json input, by the audit and enforce alike",
          "[rules][grants]")
{
    JsonLinkWorkspace ws;
    auto r = ws.rules_of("app:link");
    rules::Verdict v = r.read(ws.abs("shared/config.real.json"));
    CHECK(v.why == PathClass::json_input);
    CHECK(v.finding == Finding::none);
    CHECK(v.allowed());
    auto grants = r.grants();
    const Grant* target = find(grants, "shared/config.real.json");
    REQUIRE(target);
    CHECK_FALSE(target->directory);
    CHECK(target->access == Grant::Access::read);
    CHECK(target->why == PathClass::json_input);
    // The link itself gets no rule (Landlock would follow it), and nothing beside the target is widened.
    CHECK_FALSE(find(grants, "packages/app/config.json"));
    CHECK_FALSE(find(grants, "shared"));
    CHECK_FALSE(find(grants, "shared/beside.json"));
    CHECK(r.read(ws.abs("shared/beside.json")).finding == Finding::read_outside_inputs);
    // A read permission, not a write one.
    CHECK(r.write(ws.abs("shared/config.real.json"), false).finding == Finding::stray_write);

    // The audit: a read of where the link lands, as a recorder gives it (canonical, with or without the
    // path as spelled), is no finding.
    record::Recording rec;
    rec.add(ws.abs("shared/config.real.json"), record::kRead);
    rec.add(ws.abs("shared/beside.json"), record::kRead);
    auto findings = audit::classify(rec, r, ws.session->workspace());
    CHECK(findings.reads_outside_inputs == std::vector<std::string>{"shared/beside.json"});

    // `qk show task --rules` says where the link leads.
    bool described = false;
    for (const auto& line : r.describe())
        described = described || line.path.find("shared/config.real.json") != std::string::npos;
    CHECK(described);
}

TEST_CASE("json link: a chain of links, through a directory link, allows only the file at its end",
          "[rules][grants]")
{
    JsonLinkWorkspace ws;
    auto r = ws.rules_of("app:chain");
    CHECK(r.read(ws.abs("shared/deeper/final.json")).why == PathClass::json_input);
    auto grants = r.grants();
    REQUIRE(find(grants, "shared/deeper/final.json"));
    // Neither link on the way, nor the directory holding the target.
    CHECK_FALSE(find(grants, "shared/hop.json"));
    CHECK_FALSE(find(grants, "shared/hop-dir"));
    CHECK_FALSE(find(grants, "shared/deeper"));
    CHECK(r.read(ws.abs("shared/config.real.json")).finding == Finding::read_outside_inputs);
}

TEST_CASE("json link: out of the workspace or into .git, nothing is added", "[rules][grants]")
{
    JsonLinkWorkspace ws;
    auto out = ws.rules_of("app:out");
    CHECK(out.read((ws.outside.path / "far.json").string()).why == PathClass::outside);
    for (const Grant& g : out.grants())
        CHECK_FALSE(g.path.starts_with(".."));

    auto git = ws.rules_of("app:git");
    // .git stays what it is: readable (an unkeyed read), and held by its pass-through, not a json rule.
    rules::Verdict v = git.read(ws.abs(".git/qk.json"));
    CHECK(v.why == PathClass::git);
    CHECK(v.allowed());
    CHECK_FALSE(find(git.grants(), ".git/qk.json"));
}

TEST_CASE("json link: a task without the json input reads the target outside its inputs", "[rules]")
{
    JsonLinkWorkspace ws;
    auto plain = ws.rules_of("app:plain");
    CHECK(plain.read(ws.abs("shared/config.real.json")).finding == Finding::read_outside_inputs);
    CHECK_FALSE(find(plain.grants(), "shared/config.real.json"));
}

TEST_CASE("json link: one dangling or leading to a directory keys nothing, so it allows nothing", "[rules][key]")
{
    for (const std::string target : {"../../shared/missing.json", "../../shared"}) {
        INFO(target);
        TempDir dir{"qk-json-bad-link"};
        dir.write("nx.json", "{}");
        dir.write("package.json", R"({ "name": "root", "private": true })");
        dir.write("packages/app/package.json", R"({ "name": "app" })");
        dir.write("packages/app/project.json", R"({ "name": "app", "targets": {
  "t": { "command": "true", "inputs": [{ "json": "{projectRoot}/config.json" }] } } })");
        dir.write("shared/a.json", "{}\n");
        std::filesystem::create_symlink(target, dir.path / "packages/app/config.json");
        auto session = key::Session::open(dir.path);
        REQUIRE(session);
        workspace::TaskRequest request;
        request.targets = {"t"};
        REQUIRE((*session)->plan(request));
        // The key reads the fields through the link: with no file there, the task cannot be keyed, in
        // every mode alike, and no rule is ever built for it.
        auto k = (*session)->keys().key(0);
        CHECK_FALSE(k);
    }
}
