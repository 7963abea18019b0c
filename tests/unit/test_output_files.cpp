// collect_output_files: declared outputs expanded to what exists on disk, never through a link, never
// into .git, .qk or node_modules, never outside the workspace.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache_workspace.hpp"
#include "qk/key/output_files.hpp"

namespace fs = std::filesystem;
using qk::key::collect_output_files;
using qk::key::OutputFile;
using Kind = qk::key::OutputFile::Kind;

namespace {

struct Workspace : qk::test::CacheWorkspace {
    Workspace() : CacheWorkspace("qk-output-files") {}
    std::vector<OutputFile> collect(std::vector<std::string> patterns) const
    {
        auto r = collect_output_files(root, patterns);
        if (!r)
            FAIL(r.error().message);
        return *r;
    }
    std::string refusal(std::vector<std::string> patterns) const
    {
        auto r = collect_output_files(root, patterns);
        return r ? std::string("(accepted)") : r.error().message;
    }
};

}  // namespace

TEST_CASE("a non-glob output names a whole directory: files, links unfollowed, empty directories",
          "[key][cache][output-files]")
{
    Workspace ws;
    ws.write("packages/app/dist/main.js");
    ws.write("packages/app/dist/assets/logo.svg");
    ws.write("packages/app/src/index.ts");
    fs::create_directories(ws.root / "packages/app/dist/empty/deeper");
    fs::create_directories(ws.dir / "outside/lib");
    std::ofstream(ws.dir / "outside/lib/secret.js") << "s";
    fs::create_directory_symlink(ws.dir / "outside/lib", ws.root / "packages/app/dist/lib");
    fs::create_symlink("main.js", ws.root / "packages/app/dist/alias.js");

    std::vector<OutputFile> expected = {
        {"packages/app/dist/alias.js", Kind::symlink},       {"packages/app/dist/assets/logo.svg", Kind::file},
        {"packages/app/dist/empty/deeper", Kind::directory}, {"packages/app/dist/lib", Kind::symlink},
        {"packages/app/dist/main.js", Kind::file},
    };
    CHECK(ws.collect({"packages/app/dist"}) == expected);
    // A file named whole, and an output that does not exist (yet): no error, nothing listed.
    CHECK(ws.collect({"packages/app/src/index.ts", "packages/app/missing", "packages/app/src/index.ts/x"}) ==
          std::vector<OutputFile>{{"packages/app/src/index.ts", Kind::file}});
    // An output directory that is itself empty is kept.
    fs::create_directories(ws.root / "out");
    CHECK(ws.collect({"out"}) == std::vector<OutputFile>{{"out", Kind::directory}});
}

TEST_CASE("a glob output matches files from its literal prefix; negations exclude", "[key][cache][output-files]")
{
    Workspace ws;
    ws.write("dist/packages/app/main.js");
    ws.write("dist/packages/app/chunks/a.js");
    ws.write("dist/packages/app/chunks/a.js.map");
    ws.write("dist/packages/app/vendor/v.js");
    ws.write("dist/packages/other/o.js");
    fs::create_directories(ws.root / "dist/packages/app/empty");

    CHECK(ws.collect({"dist/packages/app/**/*.js", "!dist/packages/app/vendor/**"}) ==
          std::vector<OutputFile>{{"dist/packages/app/chunks/a.js", Kind::file},
                                  {"dist/packages/app/main.js", Kind::file}});
    // A negated non-glob path excludes that directory whole, from a directory output too.
    CHECK(ws.collect({"dist/packages/app", "!dist/packages/app/chunks", "!**/*.js"}) ==
          std::vector<OutputFile>{{"dist/packages/app/empty", Kind::directory},
                                  {"dist/packages/app/vendor", Kind::directory}});
    // Overlapping outputs list each file once.
    CHECK(ws.collect({"dist/packages/other", "dist/**/o.js"}) ==
          std::vector<OutputFile>{{"dist/packages/other/o.js", Kind::file}});
}

TEST_CASE("output walks never enter .git, .qk or node_modules", "[key][cache][output-files]")
{
    Workspace ws;
    ws.write("a.js");
    ws.write("dist/b.js");
    ws.write("dist/node_modules/dep/index.js");
    ws.write("dist/Node_Modules/dep/index.js");
    ws.write(".git/hooks/c.js");
    ws.write(".qk/cache/d.js");
    ws.write("node_modules/e.js");
    CHECK(ws.collect({"**/*.js"}) == std::vector<OutputFile>{{"a.js", Kind::file}, {"dist/b.js", Kind::file}});
    CHECK(ws.collect({"dist"}) == std::vector<OutputFile>{{"dist/b.js", Kind::file}});
    CHECK(ws.collect({"node_modules/e.js", ".qk/cache"}).empty());
}

TEST_CASE("outputs are never read through a symbolic link on the way to them", "[key][cache][output-files]")
{
    Workspace ws;
    fs::create_directories(ws.dir / "outside/dist");
    std::ofstream(ws.dir / "outside/dist/x.js") << "x";
    fs::create_directories(ws.root / "packages");
    fs::create_directory_symlink(ws.dir / "outside", ws.root / "packages/app");

    std::string why = ws.refusal({"packages/app/dist"});
    CHECK_THAT(why, Catch::Contains("packages/app is a symbolic link"));
    CHECK_THAT(ws.refusal({"packages/app/dist/**/*.js"}), Catch::Contains("packages/app is a symbolic link"));
    // A link that is the output itself is an output: it is kept as a link.
    CHECK(ws.collect({"packages/app"}) == std::vector<OutputFile>{{"packages/app", Kind::symlink}});
}

TEST_CASE("outputs that could leave the workspace are refused", "[key][cache][output-files]")
{
    Workspace ws;
    for (std::string bad : {"../outside", "/etc/passwd", "packages/../../outside", "!../x", "", ".", "a/./b",
                            "\\.\\./x/**", "dist/../.."}) {
        INFO(bad);
        std::string why = ws.refusal({bad});
        CHECK_THAT(why, Catch::Contains("output \"" + bad + "\""));
        CHECK_THAT(why, Catch::Contains("inside the workspace"));
    }
    CHECK_THAT(ws.refusal({"dist/[a"}), !Catch::Contains("(accepted)"));
}
