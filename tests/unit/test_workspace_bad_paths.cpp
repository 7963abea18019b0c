// Configuration that would lead a task or qk out of the workspace (issue 38, item 10): a cwd that is
// absolute or climbs out is a problem naming where it is configured; a configuration file too large to
// parse in bounded memory is refused unread past the limit.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "qk/workspace/json.hpp"
#include "qk/workspace/workspace.hpp"

using namespace qk::workspace;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir()
    {
        std::string t = (fs::temp_directory_path() / "qk-bad-paths-XXXXXX").string();
        REQUIRE(::mkdtemp(t.data()) != nullptr);
        path = t;
    }
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    void write(const std::string& rel, const std::string& text) const
    {
        fs::create_directories((path / rel).parent_path());
        std::ofstream(path / rel) << text;
    }
};

// One project "a" at p/a whose build target takes `options`.
Workspace with_build_options(const TempDir& dir, const std::string& options)
{
    dir.write("nx.json", "{}");
    dir.write("package.json", R"({"name": "root", "private": true})");
    dir.write("p/a/project.json",
              R"({"name": "a", "targets": {"build": {"command": "touch ran", "options": )" + options + "}}}");
    auto ws = Workspace::load(dir.path);
    INFO((ws.ok() ? std::string() : ws.error().message));
    REQUIRE(ws.ok());
    return std::move(*ws);
}

}  // namespace

TEST_CASE("an options.cwd that is absolute or climbs out of the workspace is a problem saying where", "[workspace]")
{
    TempDir dir;
    const std::string fix = "; give a directory inside the workspace, relative to its root, such as \"p/a\" or "
                            "\"{projectRoot}\"";
    for (const std::string cwd : {"../..", "p/a/../../..", "{workspaceRoot}/.."}) {
        const RunSpec run = (*with_build_options(dir, R"({"cwd": ")" + cwd + "\"}").target("a", "build"))->run;
        CHECK(run.problem.find("leads outside the workspace (options.cwd in p/a/project.json)" + fix) !=
              std::string::npos);
    }
    for (const std::string& cwd : {std::string("/"), std::string("/tmp"), dir.path.string() + "/p/a"}) {
        const RunSpec run = (*with_build_options(dir, R"({"cwd": ")" + cwd + "\"}").target("a", "build"))->run;
        CHECK(run.problem == "its options.cwd \"" + cwd + "\" is an absolute path (options.cwd in p/a/project.json)" + fix);
    }
    // Inside, however spelled: a plain relative directory, and no problem.
    const RunSpec up = (*with_build_options(dir, R"({"cwd": "{projectRoot}/../b/./"})").target("a", "build"))->run;
    CHECK(up.problem.empty());
    CHECK(up.cwd == "p/b");
    CHECK((*with_build_options(dir, R"({"cwd": "{projectRoot}/.."})").target("a", "build"))->run.cwd == "p");
    CHECK((*with_build_options(dir, R"({"cwd": "p/.."})").target("a", "build"))->run.cwd == ".");
}

TEST_CASE("a configuration file over the size limit is refused, saying its size and the limit", "[workspace]")
{
    TempDir dir;
    const std::string value(kMaxConfigFileBytes - 64, 'x');
    dir.write("fits.json", R"({"x": ")" + value + "\"}");
    auto fits = read_json_file(dir.path / "fits.json", "fits.json");
    REQUIRE(fits);
    CHECK(fits->find("x")->as_string().size() == value.size());

    dir.write("p/a/project.json", R"({"name": "a", "x": ")" + std::string(kMaxConfigFileBytes, 'x') + "\"}");
    auto big = read_json_file(dir.path / "p/a/project.json", "p/a/project.json");
    REQUIRE_FALSE(big);
    CHECK(big.error().message == "p/a/project.json: 8 MiB is more than qk reads of a configuration file (8 MiB; "
                                 "parsed, a file takes many times its size in memory); one this large was most "
                                 "likely generated or damaged by mistake: keep in it only what configures the "
                                 "workspace");
    // Loading the workspace stops there, with the same words.
    dir.write("nx.json", "{}");
    dir.write("package.json", R"({"name": "root", "private": true})");
    auto ws = Workspace::load(dir.path);
    REQUIRE_FALSE(ws);
    CHECK(ws.error().message.starts_with("p/a/project.json: 8 MiB is more than qk reads of a configuration file"));
}
