// build_read_mask: the lower layer that stands an unreadable stand-in in front of what a task may not
// read, checked as files on disk (what overlayfs reads): stand-ins, opaque mirrored directories, merged
// directories, whiteouts for what may appear, and what is left alone. The mount itself is tried by
// qk-sandbox-exec's probe and the e2e tests.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "qk/enforce/read_mask.hpp"
#include "qk/util/unique_fd.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using qk::enforce::build_read_mask;

namespace {

// Every entry of the mask: 'w' whiteout, 'o' opaque directory, 'd' merged directory, 's' stand-in (a
// regular file of mode 000), 'l' link, 'f' anything else.
std::map<std::string, char> layout(const fs::path& mask)
{
    std::map<std::string, char> out;
    for (auto it = fs::recursive_directory_iterator(mask); it != fs::recursive_directory_iterator(); ++it) {
        struct stat st {};
        REQUIRE(::lstat(it->path().c_str(), &st) == 0);
        char kind = 'f';
        if (S_ISCHR(st.st_mode) && st.st_rdev == ::makedev(0, 0)) {
            kind = 'w';
        } else if (S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0) {
            kind = 's';
        } else if (S_ISLNK(st.st_mode)) {
            kind = 'l';
        } else if (S_ISDIR(st.st_mode)) {
            char v = 0;
            kind = (::getxattr(it->path().c_str(), "user.overlay.opaque", &v, 1) == 1 ||
                    ::getxattr(it->path().c_str(), "trusted.overlay.opaque", &v, 1) == 1) && v == 'y' ? 'o' : 'd';
        }
        out[it->path().lexically_relative(mask).string()] = kind;  // not fs::relative: it follows links
    }
    return out;
}

}  // namespace

TEST_CASE("read mask: beside what may be read, files are stand-ins and refused directories mirrored opaque",
          "[enforce][read-mask]")
{
    qk::test::TempDir ws("qk-mask-ws"), base("qk-mask");
    for (const char* f : {"src/a.ts", "src/deep/b.ts", "notes.txt", "other/secret.txt", "other/sub/x",
                          "other/node_modules/dep/i.js", "pkg/project.json", "pkg/src/c.ts", "pkg/spec/c.spec.ts",
                          "pkg/README.md", "node_modules/dep/index.js", "pkg/node_modules/x/i.js", ".git/HEAD",
                          ".qk/state"})
        ws.write(f, "x\n");
    ws.write("other/big.bin", std::string(100000, 'b'));
    fs::create_symlink("src/a.ts", ws.path / "link.ts");
    fs::create_symlink("secret.txt", ws.path / "other/alias");
    fs::permissions(ws.path / "pkg", fs::perms(0750));
    struct timespec old_times[2] = {{1000000000, 0}, {1000000000, 0}};
    REQUIRE(::utimensat(AT_FDCWD, (ws.path / "notes.txt").c_str(), old_times, 0) == 0);
    fs::path mask = base.path / "mask";
    fs::create_directory(mask);

    auto counts = build_read_mask(ws.path.string(), mask, {"src", "pkg/src", "pkg/README.md"}, {"gen/out", "src/made"});
    REQUIRE(counts);
    CHECK(layout(mask) == std::map<std::string, char>{
                              {"notes.txt", 's'},             // a file beside what it may read: there, unreadable
                              {"other", 'o'},                 // nothing of it may be read: mirrored whole
                              {"other/alias", 'l'},           // links as they are, resolving through the view
                              {"other/big.bin", 's'},
                              {"other/node_modules", 'd'},    // an empty place for the bind
                              {"other/secret.txt", 's'},
                              {"other/sub", 'd'},             // opaque above it: nothing of the workspace's shows
                              {"other/sub/x", 's'},
                              {"pkg", 'd'},                   // in part: merged with the workspace's
                              {"pkg/project.json", 's'},
                              {"pkg/spec", 'o'},
                              {"pkg/spec/c.spec.ts", 's'},
                              {"gen", 'w'},                   // another task's output, not there yet
                          });
    CHECK(counts->stand_ins == 6);
    CHECK(counts->refused_dirs == 2);
    CHECK(counts->kept_dirs == 1);
    CHECK(counts->hidden == 1);
    // stat answers as without the sandbox but for the mode: the size and times are the file's.
    CHECK(fs::file_size(mask / "other/big.bin") == 100000);
    struct stat st {};
    REQUIRE(::stat((mask / "notes.txt").c_str(), &st) == 0);
    CHECK(st.st_mtim.tv_sec == 1000000000);
    CHECK(fs::read_symlink(mask / "other/alias") == "secret.txt");
    // A merged directory shows the real one's mode, since overlayfs shows the topmost layer's.
    CHECK((fs::status(mask / "pkg").permissions() & fs::perms::all) == fs::perms(0750));
    // A stand-in holds nothing of the file, whoever reads it: a sparse file of zeros.
    CHECK(st.st_blocks == 0);
}

TEST_CASE("read mask: over the run's mirror, a refused directory points at its copy there", "[enforce][read-mask]")
{
    if (::geteuid() != 0)
        return;  // trusted.* extended attributes are root's (qk uses the mirror as root only)
    qk::test::TempDir ws("qk-mask-ws"), base("qk-mask"), mdir("qk-mirror");
    for (const char* f : {"src/a.ts", "notes.txt", "other/secret.txt", "other/sub/x", "lib/src/l.ts", "lib/dist/l.js"})
        ws.write(f, "x\n");

    // The run's mirror, as qk makes it once: every name, files as stand-ins, nothing of their content.
    qk::UniqueFd fd(::open(mdir.path.c_str(), O_RDONLY | O_DIRECTORY));
    auto made = qk::enforce::build_mirror(ws.path.string(), fd.get(), {qk::enforce::kStandInOwner, qk::enforce::kStandInOwner});
    REQUIRE(made);
    std::map<std::string, char> mirrored = layout(mdir.path / qk::enforce::kMirrorName);
    CHECK(mirrored.at("other/sub/x") == 's');
    CHECK(mirrored.at("src/a.ts") == 's');
    struct stat st {};
    REQUIRE(::stat((mdir.path / qk::enforce::kMirrorName / "other/secret.txt").c_str(), &st) == 0);
    CHECK(st.st_uid == qk::enforce::kStandInOwner);
    CHECK(st.st_size == 2);

    ws.write("late/y.txt", "y\n");  // made since the run started: not in the mirror
    fs::path mask = base.path / "mask";
    fs::create_directory(mask);
    auto counts = build_read_mask(ws.path.string(), mask, {"src"}, {"lib/dist", "gen"}, std::nullopt, mdir.path.string());
    REQUIRE(counts);
    CHECK(layout(mask) == std::map<std::string, char>{
                              {qk::enforce::kMirrorName, 'w'},  // the mirror's own directory, out of view
                              {"notes.txt", 's'},
                              {"other", 'd'},       // empty here: redirected to the mirror's copy
                              {"lib", 'd'},         // the same, though a task beside it writes lib/dist
                              {"late", 'o'},        // not in the mirror: mirrored here, opaque
                              {"late/y.txt", 's'},
                              {"gen", 'w'},         // another task's output, not there yet
                          });
    char to[256] {};
    ssize_t n = ::getxattr((mask / "other").c_str(), "trusted.overlay.redirect", to, sizeof to);
    CHECK(std::string(to, n > 0 ? static_cast<std::size_t>(n) : 0) ==
          std::string("/") + qk::enforce::kMirrorName + "/other");
    CHECK(counts->redirected_dirs == 2);
    CHECK(counts->refused_dirs == 1);
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
    CHECK(layout(mask) == std::map<std::string, char>{{"keep.txt", 's'}});
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
