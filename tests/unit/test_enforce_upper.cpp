// read_upper_layer over synthetic upper layers built as overlayfs (userxattr) writes them.
#include "qk/enforce/upper_layer.hpp"

#include "enforce_support.hpp"
#include "test_support.hpp"

using namespace qk;
using namespace qk::test;
using enforce::Change;
using enforce::ChangeKind;

namespace {

struct Layers {
    TempDir dir{"qk-enforce-upper"};
    efs::path ws = dir.path / "ws";
    efs::path up = dir.path / "upper";
    Layers()
    {
        efs::create_directory(ws);
        efs::create_directory(up);
    }
    std::vector<Change> read() const
    {
        auto changes = enforce::read_upper_layer(up, ws);
        REQUIRE(changes.ok());
        return *changes;
    }
};

}  // namespace

TEST_CASE("files created and modified in a merged directory are listed; the directory is not", "[enforce]")
{
    Layers l;
    put_file(l.ws / "src/a.c", "old");
    put_file(l.up / "src/a.c", "new");  // a copy-up holds the whole file
    put_xattr(l.up / "src", "user.overlay.impure", "y");
    put_xattr(l.up / "src/a.c", "user.overlay.origin", "");
    put_file(l.up / "src/b.c", "created");
    CHECK(l.read() == std::vector<Change>{{"src/a.c", ChangeKind::file}, {"src/b.c", ChangeKind::file}});
}

TEST_CASE("whiteouts, both forms, are removals of what the workspace holds", "[enforce]")
{
    Layers l;
    put_file(l.ws / "gone.txt", "x");
    put_dir(l.ws / "gone-dir/sub");
    put_link(l.ws / "gone-link", "/etc");
    put_file(l.ws / "by-xattr.txt", "x");
    put_whiteout(l.up / "gone.txt");
    put_whiteout(l.up / "gone-dir");
    put_whiteout(l.up / "gone-link");
    put_xattr_whiteout(l.up / "by-xattr.txt");
    put_whiteout(l.up / "never-there");  // the workspace no longer holds it: nothing to remove
    put_file(l.up / "empty.txt", "");   // zero-size without the xattr: an ordinary empty file
    CHECK(l.read() == std::vector<Change>{{"by-xattr.txt", ChangeKind::removed},
                                          {"empty.txt", ChangeKind::file},
                                          {"gone-dir", ChangeKind::removed},
                                          {"gone-link", ChangeKind::removed},
                                          {"gone.txt", ChangeKind::removed}});
}

TEST_CASE("an opaque directory over a workspace directory is replaced, its whole content listed", "[enforce]")
{
    // What `rm -rf dist && mkdir -p dist/sub && write` leaves: dist opaque, nothing under it opaque.
    Layers l;
    put_file(l.ws / "dist/old.js", "old");
    put_file(l.ws / "dist/sub/kept-in-lower.js", "old");
    put_opaque_dir(l.up / "dist");
    put_file(l.up / "dist/new.js", "new");
    put_file(l.up / "dist/sub/n.js", "new");
    put_whiteout(l.up / "dist/old.js");  // hides nothing under an opaque directory
    CHECK(l.read() == std::vector<Change>{{"dist", ChangeKind::replaced_directory},
                                          {"dist/new.js", ChangeKind::file},
                                          {"dist/sub", ChangeKind::created_directory},
                                          {"dist/sub/n.js", ChangeKind::file}});
}

TEST_CASE("opaque \"x\" marks a merged directory holding xattr whiteouts, not a replaced one", "[enforce]")
{
    Layers l;
    put_file(l.ws / "d/a", "a");
    put_file(l.ws / "d/b", "b");
    put_opaque_dir(l.up / "d", "x");
    put_xattr_whiteout(l.up / "d/a");
    CHECK(l.read() == std::vector<Change>{{"d/a", ChangeKind::removed}});
}

TEST_CASE("a directory with no workspace directory under it is created, whatever stood there", "[enforce]")
{
    Layers l;
    put_file(l.ws / "was-file", "f");
    put_link(l.ws / "was-link", "/etc");  // a link to a directory: never entered, replaced
    put_opaque_dir(l.up / "was-file");   // the kernel marks a directory made over a whiteout opaque
    put_file(l.up / "was-file/in", "1");
    put_dir(l.up / "was-link");
    put_file(l.up / "was-link/passwd", "2");
    put_dir(l.up / "new/deep");
    put_whiteout(l.up / "new/ghost");
    put_file(l.up / "new/deep/f", "3");
    CHECK(l.read() == std::vector<Change>{{"new", ChangeKind::created_directory},
                                          {"new/deep", ChangeKind::created_directory},
                                          {"new/deep/f", ChangeKind::file},
                                          {"was-file", ChangeKind::created_directory},
                                          {"was-file/in", ChangeKind::file},
                                          {"was-link", ChangeKind::created_directory},
                                          {"was-link/passwd", ChangeKind::file}});
}

TEST_CASE("links and special files are listed as such, never followed", "[enforce]")
{
    Layers l;
    put_dir(l.ws / "out");
    put_dir(l.up / "out");
    put_link(l.up / "out/abs", "/etc");
    put_link(l.up / "out/dangling", "nowhere");
    REQUIRE(::mkfifo((l.up / "out/fifo").c_str(), 0644) == 0);
    CHECK(l.read() == std::vector<Change>{{"out/abs", ChangeKind::symlink},
                                          {"out/dangling", ChangeKind::symlink},
                                          {"out/fifo", ChangeKind::special}});
}

TEST_CASE("a device that is not 0/0 is special, not a whiteout", "[enforce][privileged]")
{
    if (::geteuid() != 0) {
        qk::test::skip_or_fail("not root: only root can make a device node");
        return;
    }
    Layers l;
    REQUIRE(::mknod((l.up / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    CHECK(l.read() == std::vector<Change>{{"null", ChangeKind::special}});
}

TEST_CASE("names may hold newlines, spaces and bytes that are not UTF-8", "[enforce]")
{
    Layers l;
    const std::string odd = "a b\nc\xff";
    put_dir(l.ws / odd);
    put_file(l.up / odd / "x y", "1");
    put_file(l.ws / "to\ngo", "1");
    put_whiteout(l.up / "to\ngo");
    CHECK(l.read() == std::vector<Change>{{odd + "/x y", ChangeKind::file}, {"to\ngo", ChangeKind::removed}});
}

TEST_CASE("parents come before children, siblings sorted by name bytes", "[enforce]")
{
    Layers l;
    for (const char* p : {"b/z", "b/a/x", "a", "B"})
        put_file(l.up / p, "");
    auto changes = l.read();
    std::vector<std::string> paths;
    for (const auto& c : changes)
        paths.push_back(c.path);
    CHECK(paths == std::vector<std::string>{"B", "a", "b", "b/a", "b/a/x", "b/z"});
}

TEST_CASE("an unreadable upper layer is an error naming it", "[enforce]")
{
    Layers l;
    auto changes = enforce::read_upper_layer(l.dir.path / "missing", l.ws);
    REQUIRE(!changes.ok());
    CHECK_THAT(changes.error().message, Catch::Contains("missing"));
}
