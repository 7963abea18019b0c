#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "qk/record/path_resolver.hpp"

using qk::record::PathResolver;
namespace fs = std::filesystem;

TEST_CASE("lexical join removes dots, double slashes and parent steps", "[record][paths]")
{
    CHECK(PathResolver::join_lexically("/a/b", "c") == "/a/b/c");
    CHECK(PathResolver::join_lexically("/a/b", "./c//d/") == "/a/b/c/d");
    CHECK(PathResolver::join_lexically("/a/b", "../c") == "/a/c");
    CHECK(PathResolver::join_lexically("/a/b", "/x/../y") == "/y");
    CHECK(PathResolver::join_lexically("/", "../..") == "/");
    CHECK(PathResolver::join_lexically("", "") == "/");
}

TEST_CASE("canonical follows symlinked directories, and the last component only when asked", "[record][paths]")
{
    fs::path root = fs::temp_directory_path() / ("qk-resolver-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "real/sub");
    fs::create_directory_symlink(root / "real", root / "link");
    fs::create_symlink(root / "real/file", root / "real/filelink");
    std::ofstream(root / "real/file") << "x";
    std::string r = fs::canonical(root).string();
    PathResolver resolver;

    CHECK(resolver.canonical(r, "link/sub/missing", false) == r + "/real/sub/missing");
    CHECK(resolver.canonical(r + "/link", "filelink", false) == r + "/real/filelink");
    CHECK(resolver.canonical(r + "/link", "filelink", true) == r + "/real/file");
    // ".." after a symlink goes up from where the link points, as the kernel does.
    CHECK(resolver.canonical(r, "link/sub/../file", true) == r + "/real/file");
    CHECK(resolver.canonical(r, "gone/deeper/x", false) == r + "/gone/deeper/x");
    CHECK(resolver.canonical("/", "..", false) == "/");
    fs::remove_all(root);
}
