// The directories a run makes for its tasks' outputs: made when missing, shared by the tasks running at
// once, removed when the last of them ends if left empty, never through a link or a file.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "qk/sandbox/output_directories.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using qk::sandbox::MadeDirectories;
using qk::sandbox::OutputDirectories;
using qk::test::TempDir;

TEST_CASE("a directory two running tasks hold goes when the last ends, if empty", "[sandbox][output-directories]")
{
    TempDir ws{"qk-outdirs"};
    MadeDirectories made;
    auto first = OutputDirectories::create(ws.path, {"out", "out/sub"}, made);
    CHECK(first.created() == std::vector<std::string>{"out", "out/sub"});
    auto second = OutputDirectories::create(ws.path, {"out"}, made);
    CHECK(second.created() == std::vector<std::string>{"out"});  // made by the first, held by both
    first.remove_empty();
    CHECK_FALSE(fs::exists(ws.path / "out/sub"));  // only the first held it
    CHECK(fs::is_directory(ws.path / "out"));      // the second still holds it
    second.remove_empty();
    CHECK_FALSE(fs::exists(ws.path / "out"));
}

TEST_CASE("a held directory a task removed is made again for the next", "[sandbox][output-directories]")
{
    TempDir ws{"qk-outdirs"};
    MadeDirectories made;
    auto first = OutputDirectories::create(ws.path, {"out"}, made);
    fs::remove(ws.path / "out");  // the first task's rm -rf out
    auto second = OutputDirectories::create(ws.path, {"out"}, made);
    CHECK(fs::is_directory(ws.path / "out"));
    CHECK(second.created() == std::vector<std::string>{"out"});
    first.remove_empty();
    CHECK(fs::is_directory(ws.path / "out"));
    second.remove_empty();
    CHECK_FALSE(fs::exists(ws.path / "out"));
}

TEST_CASE("what a task left in a made directory, or what was there before, stays", "[sandbox][output-directories]")
{
    TempDir ws{"qk-outdirs"};
    fs::create_directories(ws.path / "kept");
    std::ofstream(ws.path / "file") << "x";
    fs::create_directory_symlink(ws.path / "kept", ws.path / "link");
    MadeDirectories made;
    {
        auto dirs = OutputDirectories::create(ws.path, {"kept", "kept/new", "file/x", "link/y", "full"}, made);
        CHECK(dirs.created() == std::vector<std::string>{"kept/new", "full"});  // not through the link or the file
        std::ofstream(ws.path / "full/out.txt") << "written";
    }  // ended: removed if empty
    CHECK(fs::is_directory(ws.path / "kept"));
    CHECK_FALSE(fs::exists(ws.path / "kept/new"));
    CHECK(fs::exists(ws.path / "full/out.txt"));
    CHECK_FALSE(fs::exists(ws.path / "link/y"));
}
