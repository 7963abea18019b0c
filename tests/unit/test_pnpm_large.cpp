// The large real lockfile (tests/fixtures/pnpm/pnpm-lock-v9-large.yaml, a copy of the team's shared/data one). Expected counts
// and closure sizes were computed independently with python3-yaml (CSafeLoader) and a separate
// refToRelative + walk; directory names of the long keys with a separate Python port of depPathToFilename.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <set>
#include <string>

#include "qk/workspace/pnpm_lock.hpp"
#include "qk/workspace/pnpm_store_index.hpp"
#include "qk/workspace/pnpm_closure.hpp"

using namespace qk::workspace;

namespace {

std::string large_path()
{
    if (const char* p = std::getenv("QK_PNPM_LARGE_lock."))
        return p;
    return std::string(QK_SOURCE_DIR) + "/tests/fixtures/pnpm/pnpm-lock-v9-large.yaml";
}

const PnpmLock& large()
{
    static const PnpmLock lock = [] {
        auto r = parse_pnpm_lock(large_path());
        if (!r)
            FAIL(r.error().message << " (set QK_PNPM_LARGE_lock. to the lockfile's path)");
        return std::move(r).value();
    }();
    return lock;
}

std::size_t closure_size(std::vector<std::string> importers)
{
    auto r = importer_closure(large(), importers);
    REQUIRE(r.ok());
    return r->size();
}

}  // namespace

TEST_CASE("the large lockfile: counts", "[workspace][pnpm][large]")
{
    const PnpmLock& lock = large();
    CHECK(lock.lockfile_version == "9.0");
    CHECK(lock.importers.size() == 177);
    CHECK(lock.packages.size() == 1672);
    CHECK(lock.snapshots.size() == 1674);
    CHECK(lock.catalogs.at("default").size() > 100);
    CHECK(lock.overrides.at("nopt@5") == "npm:@pnpm/nopt@^0.2.1");
    CHECK(lock.patched_dependencies.size() == 3);

    std::size_t importer_deps = 0, links = 0, snapshot_edges = 0, optional_snapshots = 0;
    for (const auto& [path, imp] : lock.importers)
        for (const PnpmImporterDeps* deps : {&imp.dependencies, &imp.dev_dependencies, &imp.optional_dependencies})
            for (const auto& [alias, dep] : *deps) {
                ++importer_deps;
                links += dep.link.has_value();
                CHECK(dep.link.has_value() != dep.snapshot.has_value());
            }
    for (const PnpmSnapshot& s : lock.snapshots) {
        snapshot_edges += s.dependency_snapshots.size() + s.optional_dependency_snapshots.size();
        optional_snapshots += s.optional;
    }
    CHECK(importer_deps == 2158);
    CHECK(links == 1247);
    CHECK(snapshot_edges == 3299);
    CHECK(optional_snapshots == 57);
}

TEST_CASE("the large lockfile: closures", "[workspace][pnpm][large]")
{
    CHECK(closure_size({"."}) == 909);
    CHECK(closure_size({"pkg-manager/core"}) == 484);
    CHECK(closure_size({"pkg-manager/core", "."}) == 1198);
    std::vector<std::string> all;
    for (const auto& [path, imp] : large().importers)
        all.push_back(path);
    CHECK(closure_size(all) == 1674);
    auto prod = importer_closure(large(), std::vector<std::string>{"."}, {.dev = false});
    REQUIRE(prod.ok());
    CHECK(prod->size() == 0);  // the root has only devDependencies
}

TEST_CASE("the large lockfile: spot checks", "[workspace][pnpm][large]")
{
    const PnpmLock& lock = large();
    auto babel = lock.find_snapshot("@babel/core@7.26.9");
    REQUIRE(babel);
    CHECK(lock.package_of(lock.snapshots[*babel]).resolution.integrity ==
          "sha512-lWBYIrF7qK5+GjY5Uy+/hEgp8OJWOD/rpy74GplYRhEauvbHDeFB8t5hPOZxCZ0Oxf4Cc36tK51/l3ymJysrKw==");

    const PnpmImporter& root = lock.importers.at(".");
    CHECK(root.dev_dependencies.at("@babel/preset-typescript").version == "7.26.0(@babel/core@7.26.9)");

    // An alias to a scoped package, and a link two levels up.
    const PnpmImporterDep& ramda = lock.importers.at("cache/commands").dependencies.at("ramda");
    REQUIRE(ramda.snapshot);
    CHECK(lock.snapshots[*ramda.snapshot].key == "@pnpm/ramda@0.28.1");
    const PnpmImporterDep& loggers = lock.importers.at("pkg-manager/core").dependencies.at("@pnpm/core-loggers");
    CHECK(loggers.link == "packages/core-loggers");

    // A patched package with a peer, from a catalog specifier, in a nested importer.
    const PnpmImporterDep& pkg = lock.importers.at("pnpm/artifacts/exe").dev_dependencies.at("pkg");
    CHECK(pkg.specifier == "catalog:");
    REQUIRE(pkg.snapshot);
    const PnpmSnapshot& s = lock.snapshots[*pkg.snapshot];
    CHECK(s.name == "@yao-pkg/pkg");
    CHECK(s.version == "5.12.0");
    CHECK(lock.package_of(s).id == "@yao-pkg/pkg@5.12.0");
    CHECK(s.transitive_peer_dependencies == std::vector<std::string>{"encoding", "supports-color"});
    CHECK(lock.find_importer("pnpm/artifacts/exe") != nullptr);

    // externalDependencies by name.
    auto typescript = package_closure(lock, std::vector<std::string>{"typescript"});
    REQUIRE(typescript.ok());
    CHECK(typescript->size() == lock.snapshots_by_name.at("typescript").size());
}

TEST_CASE("the large lockfile: directory names", "[workspace][pnpm][large]")
{
    const PnpmLock& lock = large();
    PnpmStoreIndex v9(lock, {9, 120});
    PnpmStoreIndex v10(lock, {10, 120});
    {
        std::size_t shared = 0;  // snapshots whose directory another one holds
        for (std::uint32_t i = 0; i < lock.snapshots.size(); ++i)
            shared += v9.find(v9.dir(i)) != i;
        CHECK(shared == 0);
    }
    {
        std::size_t shared = 0;  // snapshots whose directory another one holds
        for (std::uint32_t i = 0; i < lock.snapshots.size(); ++i)
            shared += v10.find(v10.dir(i)) != i;
        CHECK(shared == 0);
    }
    auto dir9 = [&](std::string_view key) { return v9.dir(*lock.find_snapshot(key)); };
    auto dir10 = [&](std::string_view key) { return v10.dir(*lock.find_snapshot(key)); };
    CHECK(dir9("JSONStream@1.3.5") == "JSONStream@1.3.5_r3os6ifnv5rfzwtsmjig3b325i");
    CHECK(dir10("JSONStream@1.3.5") == "JSONStream@1.3.5_fb8f73c374dcf7070ffed90b688edabd");
    const char* long_key =
        "cosmiconfig-typescript-loader@4.4.0(@types/node@20.5.1)(cosmiconfig@8.3.6(typescript@5.5.4))"
        "(ts-node@10.9.2(@types/node@18.19.34)(typescript@5.5.4))(typescript@5.5.4)";
    CHECK(dir9(long_key) ==
          "cosmiconfig-typescript-loader@4.4.0_@types+node@20.5.1_cosmiconfig@8.3.6_typescript@5.5.4__ts_"
          "qemymwlzartiykq6pdboiml3ei");
    CHECK(dir10(long_key) == "cosmiconfig-typescript-loader@4.4.0_@types+node@20.5.1_cosmiconfig@8.3.6_typescript@5.5_"
                             "aaf65d2e12a666e6160d119395a05809");
    CHECK(dir9("@typescript-eslint/eslint-plugin@6.18.1(@typescript-eslint/parser@6.18.1(eslint@8.57.1)(typescript@5.5."
               "4))(eslint@8.57.1)(typescript@5.5.4)") ==
          "@typescript-eslint+eslint-plugin@6.18.1_@typescript-eslint+parser@6.18.1_eslint@8.57.1_typesc_"
          "wzxvh7jx37zmwmktfy572db4py");
    for (std::uint32_t i = 0; i < lock.snapshots.size(); ++i) {
        CHECK(v9.dir(i).size() <= 120);
        CHECK(v9.find(v9.dir(i)) == i);
    }
}

// Not run by default: `qk_unit_tests "[pnpm-bench]"`. Issue 5's budget: mapping a 3,000-snapshot lockfile
// and placing 1,000,000 reads under a second together.
TEST_CASE("bench: parse, map and place 1,000,000 reads", "[.][pnpm-bench]")
{
    using clock = std::chrono::steady_clock;
    auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
    const std::string path = large_path();
    auto t0 = clock::now();
    auto lock = parse_pnpm_lock(path);
    REQUIRE(lock.ok());
    auto t1 = clock::now();
    PnpmStoreIndex index(*lock, {9, 120});
    auto t2 = clock::now();
    std::vector<std::string> reads;
    for (std::uint32_t i = 0; i < lock->snapshots.size(); ++i)
        reads.push_back(index.dir(i) + "/node_modules/" + lock->snapshots[i].name + "/package.json");
    std::size_t placed = 0;
    auto t3 = clock::now();
    for (std::size_t n = 0; n < 1000000; ++n)
        placed += index.place(reads[n % reads.size()]).has_value();
    auto t4 = clock::now();
    CHECK(placed == 1000000);
    WARN("parse " << ms(t1 - t0) << " ms, map " << lock->snapshots.size() << " dirs " << ms(t2 - t1)
                  << " ms, place 1,000,000 reads " << ms(t4 - t3) << " ms, together " << ms(t2 - t0) + ms(t4 - t3)
                  << " ms");
}
