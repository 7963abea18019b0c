// build_read_mask: the lower layer that hides what a task may not read, checked as files on disk (what
// overlayfs reads): whiteouts, opaque directories, merged directories, and what is left alone. The
// mount itself is tried by qk-sandbox-exec's probe and the e2e tests.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "qk/enforce/read_mask.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using qk::enforce::build_read_mask;

namespace {

// Every entry of the mask: 'w' whiteout, 'o' opaque directory, 'd' merged directory, 'f' anything else.
std::map<std::string, char> layout(const fs::path& mask)
{
    std::map<std::string, char> out;
    for (auto it = fs::recursive_directory_iterator(mask); it != fs::recursive_directory_iterator(); ++it) {
        struct stat st {};
        REQUIRE(::lstat(it->path().c_str(), &st) == 0);
        char kind = 'f';
        if (S_ISCHR(st.st_mode) && st.st_rdev == ::makedev(0, 0)) {
            kind = 'w';
        } else if (S_ISDIR(st.st_mode)) {
            char v = 0;
            kind = ::getxattr(it->path().c_str(), "user.overlay.opaque", &v, 1) == 1 && v == 'y' ? 'o' : 'd';
        }
        out[fs::relative(it->path(), mask).string()] = kind;
    }
    return out;
}

}  // namespace

TEST_CASE("read mask: beside what may be read, files are whiteouts and directories opaque", "[enforce][read-mask]")
{
    qk::test::TempDir ws("qk-mask-ws"), base("qk-mask");
    for (const char* f : {"src/a.ts", "src/deep/b.ts", "notes.txt", "other/secret.txt", "other/sub/x",
                          "pkg/project.json", "pkg/src/c.ts", "pkg/spec/c.spec.ts", "pkg/README.md",
                          "node_modules/dep/index.js", "pkg/node_modules/x/i.js", ".git/HEAD", ".qk/state"})
        ws.write(f, "x\n");
    fs::create_symlink("src/a.ts", ws.path / "link.ts");
    fs::permissions(ws.path / "pkg", fs::perms(0750));
    fs::path mask = base.path / "mask";
    fs::create_directory(mask);

    auto counts = build_read_mask(ws.path.string(), mask, {"src", "pkg/src", "pkg/README.md"}, {"gen/out", "src/made"});
    REQUIRE(counts);
    CHECK(layout(mask) == std::map<std::string, char>{
                              {"notes.txt", 'w'},        // a file beside what it may read
                              {"other", 'o'},            // nothing of it may be read: its contents hidden whole
                              {"pkg", 'd'},              // in part: merged with the workspace's
                              {"pkg/project.json", 'w'},
                              {"pkg/spec", 'o'},
                              {"gen", 'w'},              // another task's output, not there yet
                          });
    CHECK(counts->hidden_files == 3);
    CHECK(counts->hidden_dirs == 2);
    CHECK(counts->kept_dirs == 1);
    // A merged directory shows the real one's mode, since overlayfs shows the topmost layer's.
    CHECK((fs::status(mask / "pkg").permissions() & fs::perms::all) == fs::perms(0750));
}

TEST_CASE("read mask: nothing to hide when the workspace may be read whole", "[enforce][read-mask]")
{
    qk::test::TempDir ws("qk-mask-ws"), base("qk-mask");
    ws.write("a.txt", "a\n");
    auto counts = build_read_mask(ws.path.string(), base.path, {"src", ""}, {"gen"});
    REQUIRE(counts);
    CHECK(layout(base.path).empty());
}

TEST_CASE("read mask: a link on the way hides nothing beneath it and is not followed", "[enforce][read-mask]")
{
    qk::test::TempDir ws("qk-mask-ws"), outside("qk-mask-outside"), base("qk-mask");
    outside.write("real/secret.txt", "s\n");
    ws.write("keep.txt", "k\n");
    fs::create_directory_symlink(outside.path / "real", ws.path / "via");
    fs::path mask = base.path / "mask";
    fs::create_directory(mask);
    // "via/secret.txt" is visible by the rules' walk only if no link stands on the way: here one does.
    auto counts = build_read_mask(ws.path.string(), mask, {"via/secret.txt"});
    REQUIRE(counts);
    CHECK(layout(mask) == std::map<std::string, char>{{"keep.txt", 'w'}});
    CHECK(fs::exists(outside.path / "real/secret.txt"));
}

TEST_CASE("read mask: an unusable mask directory is an error that says where", "[enforce][read-mask]")
{
    qk::test::TempDir ws("qk-mask-ws");
    ws.write("a.txt", "a\n");
    auto counts = build_read_mask(ws.path.string(), ws.path / "missing", {"src"});
    REQUIRE_FALSE(counts);
    CHECK(counts.error().message.find("missing") != std::string::npos);
}
