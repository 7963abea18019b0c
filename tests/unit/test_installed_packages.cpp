// Placing reads in installed packages: which .pnpm directory is which snapshot, when nothing is placed,
// and the package findings and the summary lines they give.
#include <catch2/catch.hpp>

#include "qk/audit/findings.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/report/sandbox_summary.hpp"
#include "qk/rules/installed_packages.hpp"
#include "test_support.hpp"

#include <fmt/core.h>

using namespace qk;
using qk::test::TempDir;

namespace {

constexpr const char* kLock = R"(lockfileVersion: '9.0'

importers:

  .:
    devDependencies:
      Fallow:
        specifier: 1.0.0
        version: 1.0.0

packages:

  Fallow@1.0.0:
    resolution: {integrity: sha512-AAAA}

  react@18.2.0:
    resolution: {integrity: sha512-BBBB}

  react-dom@18.2.0:
    resolution: {integrity: sha512-CCCC}
    peerDependencies:
      react: ^18.2.0

snapshots:

  Fallow@1.0.0: {}

  react@18.2.0: {}

  react-dom@18.2.0(react@18.2.0):
    dependencies:
      react: 18.2.0
)";

workspace::PnpmLock lock_of(const char* text)
{
    auto lock = workspace::parse_pnpm_lock_text(text, "pnpm-lock.yaml");
    REQUIRE(lock);
    return std::move(lock).value();
}

}  // namespace

TEST_CASE("installed packages: a store directory's package.json is its snapshot's, by the install's pnpm major",
          "[rules][installed-packages]")
{
    workspace::PnpmLock lock = lock_of(kLock);
    for (int major : {9, 10}) {
        TempDir dir;
        dir.write("node_modules/.modules.yaml", fmt::format("nodeLinker: isolated\npackageManager: pnpm@{}.1.0\n"
                                                            "virtualStoreDir: .pnpm\nvirtualStoreDirMaxLength: 120\n",
                                                            major));
        auto installed = rules::InstalledPackages::load(dir.path, &lock);
        REQUIRE(installed);
        REQUIRE(*installed);
        const auto& p = **installed;
        workspace::PnpmLayout layout{major, 120};
        std::string fallow = workspace::pnpm_dir_name("Fallow@1.0.0", layout);  // upper case: hashed
        CHECK(fallow.starts_with("Fallow@1.0.0_"));
        auto s = p.manifest_of("node_modules/.pnpm/" + fallow + "/node_modules/Fallow/package.json");
        REQUIRE(s);
        CHECK(p.name(*s) == "Fallow");
        auto dom = p.manifest_of("node_modules/.pnpm/react-dom@18.2.0_react@18.2.0/node_modules/react-dom/package.json");
        REQUIRE(dom);
        CHECK(p.name(*dom) == "react-dom");
        // Not a package's own manifest: a file inside it, a dependency's link, elsewhere in node_modules,
        // a directory no snapshot names.
        CHECK_FALSE(p.manifest_of("node_modules/.pnpm/react@18.2.0/node_modules/react/index.js"));
        CHECK_FALSE(p.manifest_of("node_modules/.pnpm/react@18.2.0/node_modules/react/lib/package.json"));
        CHECK_FALSE(p.manifest_of("node_modules/.pnpm/react-dom@18.2.0_react@18.2.0/node_modules/react/package.json"));
        CHECK_FALSE(p.manifest_of("node_modules/.pnpm/node_modules/react/package.json"));
        CHECK_FALSE(p.manifest_of("node_modules/.pnpm/left-over@1.0.0/node_modules/left-over/package.json"));
        CHECK_FALSE(p.manifest_of("node_modules/.modules.yaml"));
        CHECK_FALSE(p.manifest_of("packages/a/node_modules/.pnpm/react@18.2.0/node_modules/react/package.json"));
    }
}

TEST_CASE("installed packages: nothing is placed without a lockfile, an install, or a virtual store",
          "[rules][installed-packages]")
{
    workspace::PnpmLock lock = lock_of(kLock);
    TempDir dir;
    std::string why;
    auto none = rules::InstalledPackages::load(dir.path, nullptr, &why);
    REQUIRE(none);
    CHECK_FALSE(*none);
    CHECK(why == "no pnpm-lock.yaml at the workspace root");
    auto uninstalled = rules::InstalledPackages::load(dir.path, &lock, &why);
    REQUIRE(uninstalled);
    CHECK_FALSE(*uninstalled);
    CHECK(why == "nothing is installed (no node_modules/.modules.yaml)");
    dir.write("node_modules/.modules.yaml", "nodeLinker: hoisted\npackageManager: pnpm@10.0.0\n");
    auto hoisted = rules::InstalledPackages::load(dir.path, &lock, &why);
    REQUIRE(hoisted);
    CHECK_FALSE(*hoisted);
    CHECK(why == "node-linker=hoisted has no store of packages to place reads in");
    dir.write("node_modules/.modules.yaml", "packageManager: [\n");
    auto bad = rules::InstalledPackages::load(dir.path, &lock, &why);
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::Contains(".modules.yaml"));
    CHECK_THAT(bad.error().message, Catch::EndsWith("run pnpm install again to rewrite it"));
}

TEST_CASE("package findings: allowed, so never going beyond; listed per task and once when many read them",
          "[rules][installed-packages]")
{
    audit::TaskFindings only_packages;
    only_packages.unkeyed_packages = {"fallow"};
    CHECK_FALSE(only_packages.went_beyond());
    CHECK_FALSE(only_packages.empty());

    audit::RunAudit run;
    auto task = [](std::string id, std::vector<std::string> hoisted, std::vector<std::string> unkeyed = {}) {
        audit::TaskAudit t{std::move(id), audit::TaskStatus::audited, "", {}};
        t.findings.hoisted_packages = std::move(hoisted);
        t.findings.unkeyed_packages = std::move(unkeyed);
        return t;
    };
    run.tasks = {task("a:build", {"phantom", "ms"}), task("b:build", {"phantom"}), task("c:build", {}, {"phantom"}),
                 task("d:lint", {}, {"fallow"})};
    run.finish();
    REQUIRE(run.packages_read_by_many.size() == 1);
    CHECK(run.packages_read_by_many[0].path == "phantom");
    CHECK(run.packages_read_by_many[0].tasks == 3);
    CHECK(run.counts.went_beyond == 0);
    CHECK(report::sandbox_summary(run) ==
          "Sandbox audit: 4 tasks kept to what they declare\n"
          "  installed packages read by many tasks, which the sandbox allows, but not in their keys:\n"
          "    phantom (3 tasks: a:build, b:build, c:build)\n"
          "  a:build\n"
          "    1 installed package read that nothing its importers install depends on, which the sandbox "
          "allows, found through pnpm's hoisting; declare it as a dependency of the package importing it:\n"
          "      ms\n"
          "  d:lint\n"
          "    1 installed package read, which the sandbox allows, but not in its key; name it in its "
          "externalDependencies:\n"
          "      fallow\n");
    std::string json = report::sandbox_report_json(run);
    CHECK_THAT(json, Catch::Contains("\"packagesReadByMany\": [\n    {\n      \"package\": \"phantom\","));
    CHECK_THAT(json, Catch::Contains("\"hoistedPackages\": [\n          \"ms\",\n          \"phantom\"\n        ]"));
}
