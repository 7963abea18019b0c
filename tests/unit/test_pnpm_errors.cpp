// Malformed lockfiles: each message names file:line:column, says what was expected, and what to do.
#include <catch2/catch.hpp>

#include <string>

#include "qk/workspace/pnpm_lock.hpp"

using namespace qk::workspace;

namespace {

std::string error_of(std::string_view text)
{
    auto r = parse_pnpm_lock_text(text, "ws/pnpm-lock.yaml");
    REQUIRE_FALSE(r.ok());
    return r.error().message;
}

const char* const head = "lockfileVersion: '9.0'\n"  // line 1
                         "\n"
                         "importers:\n"  // line 3
                         "\n"
                         "  .:\n"  // line 5
                         "    dependencies:\n"
                         "      ms:\n"  // line 7
                         "        specifier: ^2.1.3\n"
                         "        version: 2.1.3\n"  // line 9
                         "\n"
                         "packages:\n"  // line 11
                         "\n";

}  // namespace

TEST_CASE("malformed YAML names file:line:column and what the parser expected", "[workspace][pnpm]")
{
    std::string m =
        error_of("lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies: {ms: {specifier: 1, version: 2}\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:5:1: malformed YAML: did not find expected ',' or '}' (while "
                                    "parsing a flow mapping at line 4 column 19)"));
    CHECK_THAT(m, Catch::Contains("pnpm install"));

    m = error_of("lockfileVersion: '9.0'\nimporters:\n  .:\n  bad indentation: [\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:5:1: malformed YAML:"));

    m = error_of("lockfileVersion: '9.0'\nsettings:\n\tautoInstallPeers: true\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:3:1: malformed YAML: found character that cannot start any "
                                    "token"));

    m = error_of("lockfileVersion: '9.0'\nimporters:\n  .: {}\n  .: {}\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:4:3: malformed YAML: the key '.' appears twice in one mapping "
                                    "(first at line 3)"));
}

TEST_CASE("merge conflict markers point at the line and at pnpm install", "[workspace][pnpm]")
{
    std::string m = error_of(std::string(head) + "<<<<<<< HEAD\n  ms@2.1.3: {}\n=======\n>>>>>>> main\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:13:1: an unresolved merge conflict marker; run `pnpm install`"));
}

TEST_CASE("a lockfileVersion other than 9.x says which versions are read and what to do", "[workspace][pnpm]")
{
    std::string m = error_of("lockfileVersion: '6.0'\n\nimporters: {}\n");
    CHECK(m == "ws/pnpm-lock.yaml:1:18: lockfileVersion '6.0' was written by pnpm 8; qk reads lockfileVersion '9.0', "
               "which pnpm 9, 10 and 11 write: run `pnpm install` with pnpm 9 or later (for example `corepack use "
               "pnpm@9`) to convert it");
    m = error_of("lockfileVersion: 5.4\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:1:18: lockfileVersion '5.4' was written by pnpm 7;"));
    m = error_of("lockfileVersion: '10.0'\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:1:18: lockfileVersion '10.0' is newer than this qk understands; "
                                    "qk reads lockfileVersion '9.0'"));
    m = error_of("importers: {}\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:1:1: no `lockfileVersion`") &&
                      Catch::Contains("qk reads lockfileVersion '9.0'"));
    m = error_of("- just\n- a list\n");
    CHECK_THAT(m,
               Catch::StartsWith("ws/pnpm-lock.yaml:1:1: expected a mapping of lockfile sections, found a sequence"));
    m = error_of("");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:1:1: the file is empty"));
}

TEST_CASE("missing sections and entries: a snapshot without its package, a dependency without its snapshot",
          "[workspace][pnpm]")
{
    // The importer installs ms@2.1.3, which `snapshots` lacks (the section is missing).
    std::string m = error_of(std::string(head) + "  ms@2.1.3:\n    resolution: {integrity: sha512-X}\n");
    CHECK(m == "ws/pnpm-lock.yaml:7:7: the importer '.' installs 'ms' as '2.1.3', but `snapshots` has no "
               "'ms@2.1.3'; the lockfile is incomplete: regenerate it with `pnpm install` (after resolving any merge "
               "conflict), or fix it by hand");

    // A snapshot whose package entry is missing (`packages` is empty).
    m = error_of(std::string(head) + "snapshots:\n\n  ms@2.1.3: {}\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:15:3: the snapshot 'ms@2.1.3' has no entry 'ms@2.1.3' under "
                                    "`packages`; the lockfile is incomplete"));

    // A snapshot dependency that names no snapshot.
    m = error_of(std::string(head) +
                 "  ms@2.1.3:\n    resolution: {integrity: sha512-X}\n\nsnapshots:\n\n  ms@2.1.3:\n    "
                 "dependencies:\n      debug: 4.3.4(supports-color@8.1.1)\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:20:7: the snapshot 'ms@2.1.3' installs 'debug' as "
                                    "'4.3.4(supports-color@8.1.1)', but `snapshots` has no "
                                    "'debug@4.3.4(supports-color@8.1.1)'"));

    // A package without resolution.
    m = error_of(std::string(head) + "  ms@2.1.3:\n    engines: {node: '>=8'}\n\nsnapshots:\n\n  ms@2.1.3: {}\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:14:5: the package 'ms@2.1.3' has no `resolution`;"));
}

TEST_CASE("wrong shapes say what was expected and what was found", "[workspace][pnpm]")
{
    std::string m = error_of("lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      ms: 2.1.3\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:5:11: expected `{specifier, version}` for the dependency 'ms', "
                                    "found a scalar;"));
    m = error_of("lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      ms:\n        specifier: ^2\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:6:9: the dependency 'ms' has no `version`;"));
    m = error_of("lockfileVersion: '9.0'\nimporters: [a, b]\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:2:12: expected a mapping, found a sequence;"));
    m = error_of("lockfileVersion: '9.0'\nsettings:\n  autoInstallPeers: maybe\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:3:21: expected true or false, found a scalar 'maybe';"));
    m = error_of("lockfileVersion: '9.0'\nimporters:\n  .: {}\nsnapshots:\n  not-a-dep-path: {}\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:5:3: 'not-a-dep-path' is not a dep path"));
    m = error_of("lockfileVersion: '9.0'\nimporters:\n  .: {}\ndependencies:\n  ms:\n    specifier: ^2\n    "
                 "version: 2.1.3\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:1:1: found both `importers` and top-level dependencies"));
}

TEST_CASE("more than two documents, or only pnpm's env document", "[workspace][pnpm]")
{
    std::string m = error_of("---\na: 1\n---\nb: 2\n---\nc: 3\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:6:1: expected one YAML document, or pnpm's env document and "
                                    "then the lockfile, found 3"));
    m = error_of("---\nconfigDependencies:\n  x: 1.0.0\n");
    CHECK_THAT(m, Catch::StartsWith("ws/pnpm-lock.yaml:1:1: the file holds only pnpm's env document"));
}

TEST_CASE("a lockfile that cannot be read names the file and the reason", "[workspace][pnpm]")
{
    auto r = parse_pnpm_lock("/nonexistent/dir/pnpm-lock.yaml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "cannot read /nonexistent/dir/pnpm-lock.yaml: No such file or directory");
}
