// The pnpm v9 lockfile model on hand-written lockfiles with every shape of research §3: aliases (npm:),
// peer-suffixed keys (nested), a long name pnpm hashes, link:/workspace: importers, a nested workspace
// importer, optional dependencies, patches, git/tarball/directory resolutions, catalogs, the single-project
// form and pnpm 11's env document. Expected closures were computed independently with python3-yaml.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "qk/workspace/pnpm_lock.hpp"
#include "qk/workspace/pnpm_closure.hpp"

using namespace qk::workspace;

namespace {

const std::string fixtures = std::string(QK_SOURCE_DIR) + "/tests/fixtures/pnpm/";

const PnpmLock& workspace_lock()
{
    static const PnpmLock lock = [] {
        auto r = parse_pnpm_lock(fixtures + "workspace.yaml");
        if (!r)
            FAIL(r.error().message);
        return std::move(r).value();
    }();
    return lock;
}

std::vector<std::string> closure_keys(const std::vector<std::string>& importers, PnpmClosureOptions opts = {})
{
    auto r = importer_closure(workspace_lock(), importers, opts);
    REQUIRE(r.ok());
    return r->keys(workspace_lock());
}

const PnpmSnapshot& snapshot(std::string_view key)
{
    auto i = workspace_lock().find_snapshot(key);
    REQUIRE(i.has_value());
    return workspace_lock().snapshots[*i];
}

}  // namespace

TEST_CASE("a workspace lockfile: sections, importers, packages, snapshots", "[workspace][pnpm]")
{
    const PnpmLock& lock = workspace_lock();
    CHECK(lock.lockfile_version == "9.0");
    CHECK(lock.settings.auto_install_peers == true);
    CHECK(lock.settings.exclude_links_from_lockfile == false);
    CHECK(lock.settings.peers_suffix_max_length == 200);
    CHECK(lock.catalogs.at("default").at("ms").version == "2.1.3");
    CHECK(lock.overrides.at("is-number@<6") == "^6.0.0");
    CHECK(lock.patched_dependencies.at("left-pad@1.3.0").path == "patches/left-pad@1.3.0.patch");
    CHECK(lock.package_extensions_checksum == "sha256-VLztJiT59DQuLj+e7xg8kB9fTEUJlTrj+wQKDJ4xUfs=");

    CHECK(lock.importers.size() == 4);
    CHECK(lock.packages.size() == 21);
    CHECK(lock.snapshots.size() == 21);
    for (std::size_t i = 1; i < lock.snapshots.size(); ++i)
        CHECK(lock.snapshots[i - 1].key < lock.snapshots[i].key);

    const PnpmImporter& root = lock.importers.at(".");
    CHECK(root.dependencies.empty());
    CHECK(root.dev_dependencies.size() == 2);
    CHECK(root.dev_dependencies.at("fallow").specifier == "^1.0.0");
    CHECK(root.mark.line == 26);
}

TEST_CASE("importer dependencies resolve to snapshots or to linked directories", "[workspace][pnpm]")
{
    const PnpmLock& lock = workspace_lock();
    const PnpmImporter& a = lock.importers.at("packages/a");

    SECTION("an npm: alias installs the real package under another name")
    {
        const PnpmImporterDep& d = a.dependencies.at("alias-odd");
        CHECK(d.specifier == "npm:is-odd@3.0.1");
        CHECK(d.version == "is-odd@3.0.1");
        REQUIRE(d.snapshot);
        CHECK(lock.snapshots[*d.snapshot].key == "is-odd@3.0.1");
        CHECK(lock.snapshots[*d.snapshot].name == "is-odd");
        CHECK_FALSE(d.link);
    }
    SECTION("peers make a suffixed snapshot key")
    {
        const PnpmImporterDep& d = a.dependencies.at("react-dom");
        REQUIRE(d.snapshot);
        const PnpmSnapshot& s = lock.snapshots[*d.snapshot];
        CHECK(s.key == "react-dom@18.2.0(react@18.2.0)");
        CHECK(s.name == "react-dom");
        CHECK(s.version == "18.2.0");
        CHECK(lock.package_of(s).id == "react-dom@18.2.0");
        CHECK(lock.package_of(s).peer_dependencies.at("react") == "^18.2.0");
    }
    SECTION("workspace:* is a link, relative to the importer")
    {
        const PnpmImporterDep& d = a.dependencies.at("b");
        CHECK(d.version == "link:../b");
        CHECK_FALSE(d.snapshot);
        REQUIRE(d.link);
        CHECK(*d.link == "packages/b");
        const PnpmImporterDep& up = lock.importers.at("packages/a/e2e").dev_dependencies.at("a");
        REQUIRE(up.link);
        CHECK(*up.link == "packages/a");
    }
    SECTION("optional dependencies, catalog specifiers")
    {
        const PnpmImporterDep& d = a.optional_dependencies.at("ms");
        CHECK(d.specifier == "catalog:");
        REQUIRE(d.snapshot);
        CHECK(lock.snapshots[*d.snapshot].key == "ms@2.1.3");
    }
    SECTION("a patched package: the patch hash is part of the key, not of the package id")
    {
        const PnpmImporterDep& d = a.dependencies.at("left-pad");
        REQUIRE(d.snapshot);
        const PnpmSnapshot& s = lock.snapshots[*d.snapshot];
        CHECK(s.name == "left-pad");
        CHECK(s.version == "1.3.0");
        CHECK(lock.package_of(s).id == "left-pad@1.3.0");
        CHECK(lock.package_of(s).deprecated == "use String.prototype.padStart()");
    }
    SECTION("non-registry refs: a tarball URL, git, a local directory")
    {
        const auto& tool = lock.importers.at("packages/a/e2e").dev_dependencies.at("tool");
        REQUIRE(tool.snapshot);
        const PnpmSnapshot& t = lock.snapshots[*tool.snapshot];
        CHECK(t.key == "tool@https://codeload.github.com/o/tool/tar.gz/abc1234");
        CHECK(t.version == "https://codeload.github.com/o/tool/tar.gz/abc1234");
        CHECK(lock.package_of(t).resolution.tarball == "https://codeload.github.com/o/tool/tar.gz/abc1234");
        CHECK(lock.package_of(t).version == "2.0.0");

        const PnpmImporter& b = lock.importers.at("packages/b");
        const PnpmSnapshot& g = lock.snapshots[*b.dependencies.at("git-dep").snapshot];
        CHECK(g.name == "git-dep");
        const PnpmResolution& gr = lock.package_of(g).resolution;
        CHECK(gr.type == "git");
        CHECK(gr.repo == "https://github.com/o/git-dep.git");
        CHECK(gr.commit == "0123456789abcdef0123456789abcdef01234567");
        CHECK(gr.integrity.empty());
        CHECK(gr.text == "commit=0123456789abcdef0123456789abcdef01234567 repo=https://github.com/o/git-dep.git "
                         "type=git");

        const PnpmSnapshot& l = lock.snapshots[*b.dependencies.at("local").snapshot];
        CHECK(l.key == "local@file:local");
        CHECK(lock.package_of(l).resolution.type == "directory");
        CHECK(lock.package_of(l).resolution.directory == "local");
        CHECK(lock.package_of(l).name == "local");
    }
}

TEST_CASE("snapshot fields: dependencies, optional, transitive peers; package fields", "[workspace][pnpm]")
{
    const PnpmLock& lock = workspace_lock();
    const PnpmSnapshot& longest =
        snapshot("@scope/a-rather-long-package-name-that-pnpm-hashes@2.0.0(@scope/peer-plugin@1.0.0("
                 "react@18.2.0))(react-dom@18.2.0(react@18.2.0))(react@18.2.0)");
    CHECK(longest.name == "@scope/a-rather-long-package-name-that-pnpm-hashes");
    CHECK(longest.version == "2.0.0");
    CHECK(longest.dependencies.at("@scope/peer-plugin") == "1.0.0(react@18.2.0)");
    CHECK(longest.dependency_snapshots.size() == 3);
    CHECK(lock.package_of(longest).optional_peers == std::vector<std::string>{"@scope/peer-plugin"});

    const PnpmSnapshot& through = snapshot("through@2.3.8");
    CHECK(through.dependency_snapshots.empty());
    REQUIRE(through.optional_dependency_snapshots.size() == 1);
    CHECK(lock.snapshots[through.optional_dependency_snapshots[0]].key == "fsevents@2.3.3");
    CHECK(snapshot("fsevents@2.3.3").optional);
    CHECK(lock.package_of(snapshot("fsevents@2.3.3")).os == std::vector<std::string>{"darwin"});
    CHECK(lock.package_of(snapshot("fsevents@2.3.3")).engines.at("node") == "^8.16.0 || ^10.6.0 || >=11.0.0");
    CHECK(snapshot("fallow@1.0.0").transitive_peer_dependencies == std::vector<std::string>{"typescript"});
    CHECK(lock.package_of(snapshot("fallow@1.0.0")).has_bin);
    CHECK(lock.package_of(snapshot("jsonparse@1.3.1")).engines.at("0") == "node >= 0.2.0");
    CHECK(lock.snapshots_by_name.at("is-number").size() == 2);
}

TEST_CASE("closure: what importers install, over dependencies", "[workspace][pnpm]")
{
    SECTION("the root importer: its dev dependencies and theirs")
    {
        CHECK(closure_keys({"."}) ==
              std::vector<std::string>{"fallow@1.0.0", "is-number@7.0.0", "supports-color@7.2.0"});
        CHECK(closure_keys({"."}, {.dev = false}).empty());
    }
    SECTION("an importer with aliases, peers, a patch, optional dependencies; links are not followed")
    {
        auto r = importer_closure(workspace_lock(), std::vector<std::string>{"packages/a"});
        REQUIRE(r.ok());
        CHECK(r->size() == 15);
        CHECK(r->importers == std::vector<std::string>{"packages/a"});
        CHECK(r->links == std::vector<std::string>{"packages/b"});
        CHECK(r->contains(*workspace_lock().find_snapshot("is-number@6.0.0")));  // through alias-odd
        CHECK(r->contains(*workspace_lock().find_snapshot("fsevents@2.3.3")));   // optional, of through
        CHECK_FALSE(r->contains(*workspace_lock().find_snapshot("git-dep@git+https://github.com/o/git-dep.git#"
                                                                "0123456789abcdef0123456789abcdef01234567")));
        CHECK(closure_keys({"packages/a"}, {.optional = false}).size() == 13);
        CHECK(closure_keys({"packages/a"}, {.follow_links = true}).size() == 18);
    }
    SECTION("a nested workspace importer, through its links")
    {
        CHECK(closure_keys({"packages/a/e2e"}) ==
              std::vector<std::string>{"is-number@6.0.0", "is-odd@3.0.1",
                                       "tool@https://codeload.github.com/o/tool/tar.gz/abc1234"});
        auto r = importer_closure(workspace_lock(), std::vector<std::string>{"packages/a/e2e"}, {.follow_links = true});
        REQUIRE(r.ok());
        CHECK(r->size() == 19);
        CHECK(r->importers == std::vector<std::string>{"packages/a", "packages/a/e2e", "packages/b"});
        CHECK(r->links == std::vector<std::string>{"packages/a", "packages/b"});
    }
    SECTION("every importer together installs every snapshot")
    {
        CHECK(closure_keys({".", "packages/a", "packages/a/e2e", "packages/b"}).size() == 21);
    }
    SECTION("an unknown importer says to run pnpm install")
    {
        auto r = importer_closure(workspace_lock(), std::vector<std::string>{"packages/zzz"});
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.error().message, Catch::Contains("no importer 'packages/zzz'") &&
                                          Catch::Contains("packages/a/e2e") && Catch::Contains("pnpm install"));
    }
}

TEST_CASE("package_closure: externalDependencies by name, name@version or alias", "[workspace][pnpm]")
{
    const PnpmLock& lock = workspace_lock();
    auto keys = [&](std::vector<std::string> names) {
        auto r = package_closure(lock, names);
        REQUIRE(r.ok());
        return r->keys(lock);
    };
    CHECK(keys({"react"}) == std::vector<std::string>{"js-tokens@4.0.0", "loose-envify@1.4.0", "react@18.2.0"});
    CHECK(keys({"is-number"}) == std::vector<std::string>{"is-number@6.0.0", "is-number@7.0.0"});
    CHECK(keys({"is-number@7.0.0"}) == std::vector<std::string>{"is-number@7.0.0"});
    CHECK(keys({"alias-odd"}) == std::vector<std::string>{"is-number@6.0.0", "is-odd@3.0.1"});
    CHECK(keys({"@scope/peer-plugin"}) == std::vector<std::string>{"@scope/peer-plugin@1.0.0(react@18.2.0)",
                                                                   "js-tokens@4.0.0", "loose-envify@1.4.0",
                                                                   "react@18.2.0"});
    CHECK(keys({}).empty());
    auto bad = package_closure(lock, std::vector<std::string>{"eslint"});
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message,
               Catch::Contains("no installed package 'eslint'") && Catch::Contains("externalDependencies"));
}

TEST_CASE("key text: sorted snapshot keys with integrity, or the resolution", "[workspace][pnpm]")
{
    const PnpmLock& lock = workspace_lock();
    auto r = importer_closure(lock, std::vector<std::string>{"packages/b"});
    REQUIRE(r.ok());
    CHECK(pnpm_key_text(lock, *r) ==
          "git-dep@git+https://github.com/o/git-dep.git#0123456789abcdef0123456789abcdef01234567 "
          "commit=0123456789abcdef0123456789abcdef01234567 repo=https://github.com/o/git-dep.git type=git\n"
          "is-number@7.0.0 "
          "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==\n"
          "local@file:local directory=local type=directory\n"
          "ms@2.1.3 sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA==\n");
    // The same set, however reached, gives the same text.
    auto again = package_closure(lock, std::vector<std::string>{"ms", "git-dep", "local"});
    REQUIRE(again.ok());
    CHECK(pnpm_key_text(lock, *again) == pnpm_key_text(lock, *r));
}

TEST_CASE("the single-project form: the root importer's dependencies at top level", "[workspace][pnpm]")
{
    auto r = parse_pnpm_lock_text(R"(lockfileVersion: '9.0'

settings:
  autoInstallPeers: true
  excludeLinksFromLockfile: false

dependencies:
  ms:
    specifier: ^2.1.3
    version: 2.1.3

devDependencies:
  alias-ms:
    specifier: npm:ms@2.1.3
    version: ms@2.1.3

packages:

  ms@2.1.3:
    resolution: {integrity: sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA==}

snapshots:

  ms@2.1.3: {}
)",
                                  "single/pnpm-lock.yaml");
    REQUIRE(r.ok());
    REQUIRE(r->importers.size() == 1);
    const PnpmImporter& root = r->importers.at(".");
    CHECK(root.dependencies.at("ms").snapshot == r->find_snapshot("ms@2.1.3"));
    CHECK(root.dev_dependencies.at("alias-ms").snapshot == r->find_snapshot("ms@2.1.3"));
}

TEST_CASE("an empty project's lockfile has no packages or snapshots sections", "[workspace][pnpm]")
{
    auto r = parse_pnpm_lock_text("lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  "
                                  "excludeLinksFromLockfile: false\n\nimporters:\n\n  .: {}\n\n  packages/x: {}\n",
                                  "empty/pnpm-lock.yaml");
    REQUIRE(r.ok());
    CHECK(r->importers.size() == 2);
    CHECK(r->snapshots.empty());
    auto c = importer_closure(*r, std::vector<std::string>{".", "packages/x"});
    REQUIRE(c.ok());
    CHECK(c->size() == 0);
    CHECK(pnpm_key_text(*r, *c).empty());
}

TEST_CASE("pnpm 11's two documents: the env document, then the lockfile", "[workspace][pnpm]")
{
    auto r = parse_pnpm_lock_text(R"(---
lockfileVersion: '9.0'

importers:

  .:
    configDependencies:
      '@pnpm/plugin-x':
        specifier: 1.0.0
        version: 1.0.0

packages:

  '@pnpm/plugin-x@1.0.0':
    resolution: {integrity: sha512-ENV==}

snapshots:

  '@pnpm/plugin-x@1.0.0': {}

---
lockfileVersion: '9.0'

importers:

  .:
    dependencies:
      ms:
        specifier: ^2.1.3
        version: 2.1.3

packages:

  ms@2.1.3:
    resolution: {integrity: sha512-MS==}

snapshots:

  ms@2.1.3: {}
)",
                                  "env/pnpm-lock.yaml");
    REQUIRE(r.ok());
    CHECK(r->snapshots.size() == 1);
    CHECK(r->snapshots[0].key == "ms@2.1.3");
}

TEST_CASE("a platform list holding null, as pnpm 11 copies libc: [null] from the registry", "[workspace][pnpm]")
{
    auto r = parse_pnpm_lock_text("lockfileVersion: '9.0'\n\nimporters:\n\n  .:\n    dependencies:\n      b:\n"
                                  "        specifier: 1.0.0\n        version: 1.0.0\n\npackages:\n\n  b@1.0.0:\n"
                                  "    resolution: {integrity: sha512-B==}\n    cpu: [x64]\n    os: [win32]\n"
                                  "    libc: [null]\n\nsnapshots:\n\n  b@1.0.0: {}\n",
                                  "pnpm11/pnpm-lock.yaml");
    INFO((r.ok() ? std::string() : r.error().message));
    REQUIRE(r.ok());
    const PnpmPackage& b = r->package_of(r->snapshots[*r->find_snapshot("b@1.0.0")]);
    CHECK(b.libc.empty());
    CHECK(b.os == std::vector<std::string>{"win32"});
    // Anything else but a string is still an error, said where.
    auto bad = parse_pnpm_lock_text("lockfileVersion: '9.0'\n\npackages:\n\n  b@1.0.0:\n"
                                    "    resolution: {integrity: sha512-B==}\n    os: [null, {x: 1}]\n",
                                    "pnpm11/pnpm-lock.yaml");
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("pnpm11/pnpm-lock.yaml:7:16: expected a string"));
}
