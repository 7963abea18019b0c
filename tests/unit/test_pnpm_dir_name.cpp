// Dep paths and node_modules/.pnpm directory names. Vectors: pnpm's own tests
// (pnpm/pnpm:packages/dependency-path/test/index.ts @v9.15.9 and @v10.34.5, research §3.4), and the
// directories real pnpm 9.15.9 and 10.34.9 made for tests/fixtures/pnpm/installed-pnpm9-10.yaml.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <string>

#include "qk/workspace/pnpm_lock.hpp"
#include "qk/workspace/pnpm_dep_path.hpp"
#include "qk/workspace/pnpm_store_index.hpp"
#include "qk/workspace/pnpm_modules.hpp"

using namespace qk::workspace;

namespace {

const std::string fixtures = std::string(QK_SOURCE_DIR) + "/tests/fixtures/pnpm/";
const PnpmLayout v9{9, 120};
const PnpmLayout v10{10, 120};

std::string repeat(std::string_view s, int n)
{
    std::string out;
    for (int i = 0; i < n; ++i)
        out += s;
    return out;
}

std::set<std::string> lines_of(const std::string& path)
{
    std::ifstream in(path);
    REQUIRE(in.good());
    std::set<std::string> out;
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            out.insert(line);
    return out;
}

}  // namespace

TEST_CASE("parse_dep_path splits name, version, patch hash and peers", "[workspace][pnpm]")
{
    PnpmDepPath p = parse_dep_path("@babel/core@7.26.9");
    CHECK(p.name == "@babel/core");
    CHECK(p.version == "7.26.9");
    CHECK(p.peers.empty());

    p = parse_dep_path("foo@1.0.0(react@16.0.0(react-dom@1.0.0))(react-dom@16.0.0)");
    CHECK(p.name == "foo");
    CHECK(p.version == "1.0.0");
    CHECK(p.peers == "(react@16.0.0(react-dom@1.0.0))(react-dom@16.0.0)");

    p = parse_dep_path("@yao-pkg/pkg@5.12.0(patch_hash=ab06)(encoding@0.1.13)");
    CHECK(p.name == "@yao-pkg/pkg");
    CHECK(p.version == "5.12.0");
    CHECK(p.patch_hash == "(patch_hash=ab06)");
    CHECK(p.peers == "(encoding@0.1.13)");

    p = parse_dep_path("graceful-fs@4.2.11(patch_hash=68eb)");
    CHECK(p.version == "4.2.11");
    CHECK(p.patch_hash == "(patch_hash=68eb)");
    CHECK(p.peers.empty());

    p = parse_dep_path("tool@https://codeload.github.com/o/tool/tar.gz/abc");
    CHECK(p.name == "tool");
    CHECK(p.version == "https://codeload.github.com/o/tool/tar.gz/abc");

    p = parse_dep_path("local@file:packages/x(react@18.2.0)");
    CHECK(p.version == "file:packages/x");
    CHECK(p.peers == "(react@18.2.0)");

    CHECK(parse_dep_path("noversion").version.empty());
}

TEST_CASE("remove_dep_path_suffix gives the package id", "[workspace][pnpm]")
{
    CHECK(remove_dep_path_suffix("react-dom@18.2.0(react@18.2.0)") == "react-dom@18.2.0");
    CHECK(remove_dep_path_suffix("a@1.0.0(patch_hash=xx)(b@2.0.0(c@1.0.0))") == "a@1.0.0");
    CHECK(remove_dep_path_suffix("a@1.0.0") == "a@1.0.0");
    CHECK(remove_dep_path_suffix("a@1.0.0(unbalanced") == "a@1.0.0(unbalanced");
}

TEST_CASE("ref_to_dep_path follows pnpm's refToRelative", "[workspace][pnpm]")
{
    CHECK(ref_to_dep_path("1.2.3", "foo") == "foo@1.2.3");
    CHECK(ref_to_dep_path("18.2.0(react@18.2.0)", "react-dom") == "react-dom@18.2.0(react@18.2.0)");
    CHECK(ref_to_dep_path("is-odd@3.0.1", "alias-odd") == "is-odd@3.0.1");          // an npm: alias
    CHECK(ref_to_dep_path("@pnpm/ramda@0.28.1", "ramda") == "@pnpm/ramda@0.28.1");  // a scoped alias
    CHECK(ref_to_dep_path("https://codeload.github.com/o/r/tar.gz/abc", "r") ==
          "r@https://codeload.github.com/o/r/tar.gz/abc");
    CHECK(ref_to_dep_path("git+ssh://git@github.com/o/r.git#abc", "r") == "r@git+ssh://git@github.com/o/r.git#abc");
    CHECK(ref_to_dep_path("file:local", "local") == "local@file:local");
    CHECK(ref_to_dep_path("1.0.0(a@1.0.0)", "x") == "x@1.0.0(a@1.0.0)");
    CHECK(ref_to_dep_path("link:../b", "b") == std::nullopt);
    CHECK(ref_to_dep_path("link:", "self") == std::nullopt);
}

TEST_CASE("pnpm_dir_name: pnpm's own test vectors, pnpm 9 and pnpm 10", "[workspace][pnpm]")
{
    CHECK(pnpm_dir_name("/foo@1.0.0", v9) == "foo@1.0.0");
    CHECK(pnpm_dir_name("/@foo/bar@1.0.0", v9) == "@foo+bar@1.0.0");
    CHECK(pnpm_dir_name("/foo@1.0.0(react@16.0.0(react-dom@1.0.0))(react-dom@16.0.0)", v9) ==
          "foo@1.0.0_react@16.0.0_react-dom@1.0.0__react-dom@16.0.0");
    CHECK(pnpm_dir_name("file:test/foo-1.0.0.tgz_foo@2.0.0", v9) == "file+test+foo-1.0.0.tgz_foo@2.0.0");
    CHECK(pnpm_dir_name("/JSONSteam@1.0.0", v9) == "JSONSteam@1.0.0_jmswpk4sf667aelr6wp2xd3p54");
    CHECK(pnpm_dir_name("/JSONSteam@1.0.0", v10) == "JSONSteam@1.0.0_533d3b11e9111b7a24f914844c021ddf");

    std::string abcd = repeat("abcd/", 200);
    std::string plus = repeat("abcd+", 200);
    std::string h9 = pnpm_dir_name(abcd, v9);
    CHECK(h9 == plus.substr(0, 120 - 27) + "_jvx2blbax4cyhfgrgozfgpdv24");
    CHECK(h9.size() == 120);
    std::string h10 = pnpm_dir_name(abcd, v10);
    CHECK(h10 == plus.substr(0, 120 - 33) + "_e7c10c3598ebbc0ca640b6524c68e602");
    CHECK(h10.size() == 120);

    // '#' is escaped from pnpm 10 on.
    CHECK(pnpm_dir_name("foo@https://codeload.github.com/something/foo/tar.gz/1234#path:packages/foo", v10) ==
          "foo@https+++codeload.github.com+something+foo+tar.gz+1234+path+packages+foo");
    CHECK(pnpm_dir_name("foo@https://codeload.github.com/something/foo/tar.gz/1234#path:packages/foo", v9) ==
          "foo@https+++codeload.github.com+something+foo+tar.gz+1234#path+packages+foo");
}

TEST_CASE("pnpm_dir_name: peers, patches, long names and a shorter max length", "[workspace][pnpm]")
{
    CHECK(pnpm_dir_name("react-dom@18.2.0(react@18.2.0)") == "react-dom@18.2.0_react@18.2.0");
    CHECK(pnpm_dir_name("left-pad@1.3.0(patch_hash=0f5e)") == "left-pad@1.3.0_patch_hash=0f5e");
    CHECK(pnpm_dir_name("local@file:local") == "local@file+local");
    // Upper case forces the hash, except for file: paths.
    CHECK(pnpm_dir_name("JSONStream@1.3.5", v9) == "JSONStream@1.3.5_r3os6ifnv5rfzwtsmjig3b325i");
    CHECK(pnpm_dir_name("JSONStream@1.3.5", v10) == "JSONStream@1.3.5_fb8f73c374dcf7070ffed90b688edabd");
    CHECK(pnpm_dir_name("file:Local/Dir", v9) == "file+Local+Dir");
    // Long with nested peers (tests/fixtures/pnpm/workspace.yaml).
    const std::string key =
        "@scope/a-rather-long-package-name-that-pnpm-hashes@2.0.0(@scope/peer-plugin@1.0.0(react@18.2.0))("
        "react-dom@18.2.0(react@18.2.0))(react@18.2.0)";
    CHECK(pnpm_dir_name(key, v9) ==
          "@scope+a-rather-long-package-name-that-pnpm-hashes@2.0.0_@scope+peer-plugin@1.0.0_react@18.2._"
          "2prldhllb5q6zwac7ysauyoupm");
    CHECK(pnpm_dir_name(key, v10) ==
          "@scope+a-rather-long-package-name-that-pnpm-hashes@2.0.0_@scope+peer-plugin@1.0.0_react_"
          "3e916ab9f0966a26d832c79f9197f307");
    // virtual-store-dir-max-length 60 (pnpm 10's default on Windows).
    std::string short10 = pnpm_dir_name(key, {10, 60});
    CHECK(short10.size() == 60);
    CHECK(short10.starts_with("@scope+a-rather-long-packag_"));  // 60 - 33 characters kept
}

TEST_CASE("pnpm_dir_name matches the directories real pnpm 9 and 10 installs made", "[workspace][pnpm]")
{
    auto lock = parse_pnpm_lock(fixtures + "installed-pnpm9-10.yaml");
    REQUIRE(lock.ok());
    for (auto [layout, listing] : {std::pair{v9, "installed-pnpm9.dirs"}, std::pair{v10, "installed-pnpm10.dirs"}}) {
        std::set<std::string> ours;
        for (const PnpmSnapshot& s : lock->snapshots)
            ours.insert(pnpm_dir_name(s.key, layout));
        CHECK(ours == lines_of(fixtures + listing));
    }
}

TEST_CASE("PnpmStoreIndex maps a path under node_modules/.pnpm back to its snapshot", "[workspace][pnpm]")
{
    auto lock = parse_pnpm_lock(fixtures + "workspace.yaml");
    REQUIRE(lock.ok());
    PnpmStoreIndex index(*lock, v9);
    {
        std::size_t shared = 0;  // snapshots whose directory another one holds
        for (std::uint32_t i = 0; i < lock->snapshots.size(); ++i)
            shared += index.find(index.dir(i)) != i;
        CHECK(shared == 0);
    }

    auto react_dom = lock->find_snapshot("react-dom@18.2.0(react@18.2.0)");
    REQUIRE(react_dom);
    CHECK(index.dir(*react_dom) == "react-dom@18.2.0_react@18.2.0");
    CHECK(index.find("react-dom@18.2.0_react@18.2.0") == react_dom);
    CHECK(index.find("react-dom@18.2.0") == std::nullopt);  // a dir no snapshot names

    auto p = index.place("react-dom@18.2.0_react@18.2.0/node_modules/react-dom/package.json");
    REQUIRE(p);
    CHECK(p->snapshot == *react_dom);
    CHECK(p->name == "react-dom");
    CHECK(p->rest == "package.json");
    CHECK(p->own);

    p = index.place("react-dom@18.2.0_react@18.2.0/node_modules/loose-envify/index.js");  // a sibling link
    REQUIRE(p);
    CHECK(p->name == "loose-envify");
    CHECK_FALSE(p->own);

    auto scoped = lock->find_snapshot("@scope/peer-plugin@1.0.0(react@18.2.0)");
    REQUIRE(scoped);
    p = index.place("@scope+peer-plugin@1.0.0_react@18.2.0/node_modules/@scope/peer-plugin/lib/a.js");
    REQUIRE(p);
    CHECK(p->snapshot == *scoped);
    CHECK(p->name == "@scope/peer-plugin");
    CHECK(p->rest == "lib/a.js");
    CHECK(p->own);

    p = index.place("JSONStream@1.3.5_r3os6ifnv5rfzwtsmjig3b325i/node_modules/JSONStream");
    REQUIRE(p);
    CHECK(p->rest.empty());
    CHECK(p->own);

    CHECK_FALSE(index.place("JSONStream@1.3.5_r3os6ifnv5rfzwtsmjig3b325i"));
    CHECK_FALSE(index.place("JSONStream@1.3.5_r3os6ifnv5rfzwtsmjig3b325i/package.json"));
    CHECK_FALSE(index.place("node_modules/.bin/x"));
    CHECK_FALSE(index.place("lock.yaml"));
    CHECK_FALSE(index.place("ms@2.1.3/node_modules/@scope"));

    PnpmStoreIndex index10(*lock, v10);
    CHECK(index10.place("JSONStream@1.3.5_fb8f73c374dcf7070ffed90b688edabd/node_modules/JSONStream/index.js"));
    CHECK_FALSE(index10.place("JSONStream@1.3.5_r3os6ifnv5rfzwtsmjig3b325i/node_modules/JSONStream/index.js"));
}

TEST_CASE(".modules.yaml: pnpm 9's YAML and pnpm 10's JSON", "[workspace][pnpm]")
{
    auto m9 = parse_pnpm_modules_yaml(fixtures + "modules-pnpm9.yaml");
    REQUIRE(m9.ok());
    CHECK(m9->package_manager == "pnpm@9.15.9");
    CHECK(m9->layout.pnpm_major == 9);
    CHECK(m9->layout.max_length == 120);
    CHECK(m9->node_linker == "isolated");
    CHECK(m9->virtual_store_dir == ".pnpm");
    CHECK(m9->public_hoist_pattern == std::vector<std::string>{"*eslint*", "*prettier*"});
    CHECK(m9->hoisted_dependencies.at("is-odd@3.0.1").at("alias-odd") == "private");
    CHECK(m9->hoisted_dependencies.at("packages/a").at("a") == "private");

    auto m10 = parse_pnpm_modules_yaml(fixtures + "modules-pnpm10.json");
    REQUIRE(m10.ok());
    CHECK(m10->package_manager == "pnpm@10.34.9");
    CHECK(m10->layout.pnpm_major == 10);
    CHECK(m10->public_hoist_pattern.empty());
    CHECK(m10->hoist_pattern == std::vector<std::string>{"*"});
    CHECK(m10->hoisted_dependencies.at("react-dom@18.2.0(react@18.2.0)").at("react-dom") == "private");
    CHECK(m10->hoisted_dependencies.count("packages/a") == 0);

    auto hoisted = parse_pnpm_modules_yaml_text("nodeLinker: hoisted\npackageManager: pnpm@10.0.0\n"
                                                "virtualStoreDirMaxLength: 60\n",
                                                "x/.modules.yaml");
    REQUIRE(hoisted.ok());
    CHECK(hoisted->node_linker == "hoisted");
    CHECK(hoisted->layout.max_length == 60);

    auto bad = parse_pnpm_modules_yaml_text("packageManager: npm@10.0.0\n", "y/.modules.yaml");
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::StartsWith("y/.modules.yaml:1:1: `packageManager` is 'npm@10.0.0'"));

    // Found by fuzz_modules_yaml: a major that overflowed an int (undefined behaviour) and passed as a
    // version. No pnpm has such a major: it is refused like any other packageManager that is no pnpm.
    auto huge = parse_pnpm_modules_yaml_text("packageManager: pnpm@1077777777777.0.0\n", "z/.modules.yaml");
    REQUIRE_FALSE(huge.ok());
    CHECK_THAT(huge.error().message, Catch::StartsWith("z/.modules.yaml:1:1: `packageManager` is 'pnpm@1077777777777.0.0'"));
}
