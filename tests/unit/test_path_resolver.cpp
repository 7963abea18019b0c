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

TEST_CASE("a path of thousands of missing components or slashes resolves without deep recursion", "[record][paths]")
{
    // Found by fuzz_strace: one stack frame per component (each with a PATH_MAX buffer) overflowed the
    // stack on a name a traced command controls.
    PathResolver resolver;
    std::string slashes = "/qkt-missing" + std::string(4000, '/') + "x";
    CHECK(resolver.canonical("/", slashes, false) == "/qkt-missing/x");
    std::string deep = "/qkt-missing";
    for (int i = 0; i < 2000; ++i)
        deep += "/d";
    CHECK(resolver.canonical("/", deep + "/f", false) == deep + "/f");
    CHECK(resolver.canonical("/qkt-missing/a", "../b/./c", false) == "/qkt-missing/b/c");
    CHECK(resolver.canonical("relative/only", "x", false) == "/relative/only/x");
}

TEST_CASE("a traced process's /proc/self and /dev/fd links are not resolved in qk's own process", "[record][paths]")
{
    // Resolved here, /proc/self/fd/3 would be qk's descriptor 3 and /dev/fd/0 qk's stdin.
    PathResolver resolver;
    CHECK(resolver.canonical("", "/proc/self/fd/3/secret.txt", true) == "/proc/self/fd/3/secret.txt");
    CHECK(resolver.canonical("/", "/dev/fd/3/secret.txt", false) == "/dev/fd/3/secret.txt");
    CHECK(resolver.canonical("/", "dev/./fd/3", true) == "/dev/fd/3");  // a root of its own, then the name
    CHECK(resolver.canonical("/proc", "self/cwd/x", true) == "/proc/self/cwd/x");
    CHECK(resolver.canonical("", "/dev/stdin", true) == "/dev/stdin");
    CHECK(resolver.canonical("", "/dev/null", true) == "/dev/null");  // other devices resolve as ever
}

TEST_CASE("what one process has under /proc and /dev, and what of it leads through a descriptor", "[record][paths]")
{
    for (const char* p : {"/proc/self/fd/3", "/proc/thread-self/cwd", "/proc/1234/root/x", "/proc/12/task/13/fd/4/x",
                          "/dev/fd/3/x", "/dev/stdin"}) {
        CHECK(PathResolver::per_process(p));
        CHECK(PathResolver::through_descriptor(p));
    }
    CHECK(PathResolver::per_process("/proc/self/exe"));
    CHECK_FALSE(PathResolver::through_descriptor("/proc/self/exe"));  // a refusal there names no workspace file
    CHECK_FALSE(PathResolver::through_descriptor("/proc/self/oom_score_adj"));
    for (const char* p : {"/proc/cpuinfo", "/proc/sys/kernel/core_pattern", "/proc/selfish/fd/3", "/dev/null",
                          "/dev/fdx", "/work/proc/self/fd/3"}) {
        CHECK_FALSE(PathResolver::per_process(p));
        CHECK_FALSE(PathResolver::through_descriptor(p));
    }
}
