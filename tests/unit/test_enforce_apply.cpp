// apply(): synthetic upper layers applied to a workspace, the result compared exactly.
#include "qk/enforce/apply.hpp"

#include <sys/statfs.h>

#include <set>

#include "enforce_support.hpp"
#include "qk/enforce/upper_layer.hpp"
#include "test_support.hpp"

using namespace qk;
using namespace qk::test;
using enforce::ChangeKind;
using enforce::Discarded;
using Tree = std::map<std::string, std::string>;

namespace {

struct Layers {
    TempDir dir{"qk-enforce-apply"};
    efs::path ws = dir.path / "ws";
    efs::path up = dir.path / "upper";
    Layers()
    {
        efs::create_directory(ws);
        efs::create_directory(up);
    }
    enforce::ApplyResult apply(const enforce::KeepFn& keep) const
    {
        auto changes = enforce::read_upper_layer(up, ws);
        REQUIRE(changes.ok());
        auto result = enforce::apply(up, ws, *changes, keep);
        INFO((result.ok() ? std::string() : result.error().message));
        REQUIRE(result.ok());
        return *result;
    }
};

}  // namespace

TEST_CASE("created, modified and removed files inside outputs land; nothing else does", "[enforce]")
{
    Layers l;
    put_file(l.ws / "dist/keep.js", "old");
    put_file(l.ws / "dist/mod.js", "old");
    put_file(l.ws / "dist/del.js", "old");
    put_file(l.ws / "src/main.c", "src");
    put_file(l.up / "dist/mod.js", "new");
    put_file(l.up / "dist/add.js", "added");
    put_whiteout(l.up / "dist/del.js");
    put_file(l.up / "src/main.c", "changed");  // writes outside the outputs
    put_file(l.up / "stray.txt", "stray");

    auto r = l.apply(keep_prefixes({"dist"}));
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"},
                                {"dist/add.js", "f:added"},
                                {"dist/keep.js", "f:old"},
                                {"dist/mod.js", "f:new"},
                                {"src", "d"},
                                {"src/main.c", "f:src"}});
    CHECK(r.applied == 3);
    CHECK(r.discarded == std::vector<Discarded>{{"src/main.c", ChangeKind::file}, {"stray.txt", ChangeKind::file}});
    // What was not kept stays in the upper; what was applied left it.
    CHECK(efs::exists(l.up / "stray.txt"));
    CHECK(!efs::exists(l.up / "dist/add.js"));
}

TEST_CASE("rm -rf dist && mkdir dist && write: the output directory is exactly the new one", "[enforce]")
{
    Layers l;
    put_file(l.ws / "dist/old.js", "old");
    put_file(l.ws / "dist/sub/old.js", "old");
    put_opaque_dir(l.up / "dist");
    put_file(l.up / "dist/new.js", "new");
    put_file(l.up / "dist/sub/n.js", "n");

    auto r = l.apply(keep_prefixes({"dist"}));
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/new.js", "f:new"}, {"dist/sub", "d"}, {"dist/sub/n.js", "f:n"}});
    CHECK(r.applied == 4);
    CHECK(r.discarded.empty());
    // The old content was exchanged out and removed: the upper holds nothing of either.
    CHECK(tree_of(l.up).empty());
    CHECK(xattrs_of(l.ws / "dist").empty());
}

TEST_CASE("a directory built beside the output and renamed into place lands; the temporary leaves nothing", "[enforce]")
{
    // `mkdir dist.tmp; ...; mv dist.tmp dist` leaves only dist in the upper (dist.tmp was renamed there).
    SECTION("no dist before")
    {
        Layers l;
        put_file(l.up / "dist/app.js", "app");
        auto r = l.apply(keep_prefixes({"dist"}));
        CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/app.js", "f:app"}});
        CHECK(r.discarded.empty());
    }
    SECTION("over an old dist, removed first (rename over a whiteout makes it opaque)")
    {
        Layers l;
        put_file(l.ws / "dist/old.js", "old");
        put_opaque_dir(l.up / "dist");
        put_file(l.up / "dist/app.js", "app");
        auto r = l.apply(keep_prefixes({"dist"}));
        CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/app.js", "f:app"}});
        CHECK(r.discarded.empty());
    }
}

TEST_CASE("cargo: an output under a directory the tool creates", "[enforce]")
{
    Layers l;
    put_file(l.ws / "Cargo.toml", "[package]");
    put_file(l.up / "target/release/app", "bin");
    put_file(l.up / "target/release/deps/x.rlib", "lib");
    put_file(l.up / "target/.rustc_info.json", "{}");
    put_file(l.up / "target/debug/junk", "j");

    std::vector<std::pair<std::string, bool>> asked;
    auto prefixes = keep_prefixes({"target/release"});
    auto keep = [&](std::string_view rel, bool dir) {
        asked.emplace_back(std::string(rel), dir);
        return prefixes(rel, dir);
    };
    auto r = l.apply(keep);
    CHECK(tree_of(l.ws) == Tree{{"Cargo.toml", "f:[package]"},
                                {"target", "d"},
                                {"target/release", "d"},
                                {"target/release/app", "f:bin"},
                                {"target/release/deps", "d"},
                                {"target/release/deps/x.rlib", "f:lib"}});
    CHECK(r.discarded == std::vector<Discarded>{{"target/.rustc_info.json", ChangeKind::file},
                                                {"target/debug", ChangeKind::created_directory}});
    // target is made because an output lies in it: that is the question asked for it.
    CHECK(std::find(asked.begin(), asked.end(), std::pair<std::string, bool>{"target", true}) != asked.end());
}

TEST_CASE("a directory holding nothing kept is discarded once, not file by file", "[enforce]")
{
    Layers l;
    for (int i = 0; i < 5; ++i)
        put_file(l.up / "cache/sub" / std::to_string(i), "x");
    auto r = l.apply(keep_prefixes({"dist"}));
    CHECK(tree_of(l.ws).empty());
    CHECK(r.discarded == std::vector<Discarded>{{"cache", ChangeKind::created_directory}});
}

TEST_CASE("a file replaced by a directory, and a directory by a file", "[enforce]")
{
    Layers l;
    put_file(l.ws / "out/f2d", "file");
    put_file(l.ws / "out/d2f/inner", "inner");
    put_opaque_dir(l.up / "out/f2d");
    put_file(l.up / "out/f2d/in", "in");
    put_file(l.up / "out/d2f", "now a file");
    auto r = l.apply(keep_prefixes({"out"}));
    CHECK(tree_of(l.ws) == Tree{{"out", "d"}, {"out/d2f", "f:now a file"}, {"out/f2d", "d"}, {"out/f2d/in", "f:in"}});
    CHECK(r.discarded.empty());
}

TEST_CASE("a link created in the outputs is applied as a link, not followed", "[enforce]")
{
    Layers l;
    put_dir(l.ws / "dist");
    put_link(l.up / "dist/passwd", "/etc/passwd");
    put_link(l.up / "dist/rel", "../src");
    auto r = l.apply(keep_prefixes({"dist"}));
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/passwd", "l:/etc/passwd"}, {"dist/rel", "l:../src"}});
    CHECK(r.applied == 2);
}

TEST_CASE("a workspace link where the upper has a directory is replaced; nothing is written through it", "[enforce]")
{
    Layers l;
    efs::path outside = l.dir.path / "outside";
    put_file(outside / "precious", "untouched");
    put_link(l.ws / "dist", outside.string());
    put_dir(l.up / "dist");  // as the kernel leaves it: opaque, since a whiteout of the link came first
    put_xattr(l.up / "dist", "user.overlay.opaque", "y");
    put_file(l.up / "dist/app.js", "app");

    auto r = l.apply(keep_prefixes({"dist"}));
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/app.js", "f:app"}});
    CHECK(tree_of(outside) == Tree{{"precious", "f:untouched"}});
    CHECK(r.discarded.empty());
}

TEST_CASE("a parent that is a link in the workspace is replaced by a directory, never written through", "[enforce]")
{
    // The reader would call lib a created directory; apply must hold even when handed a file under it.
    Layers l;
    efs::path outside = l.dir.path / "outside";
    put_dir(outside);
    put_link(l.ws / "lib", outside.string());
    put_file(l.up / "lib/out.js", "x");
    std::vector<enforce::Change> changes{{"lib/out.js", ChangeKind::file}};
    auto r = enforce::apply(l.up, l.ws, changes, keep_prefixes({"lib/out.js"}));
    REQUIRE(r.ok());
    CHECK(tree_of(l.ws) == Tree{{"lib", "d"}, {"lib/out.js", "f:x"}});
    CHECK(tree_of(outside).empty());

    SECTION("unless no output lies there: then the entry is discarded and the link stays")
    {
        put_link(l.ws / "other", outside.string());
        put_file(l.up / "other/f", "y");
        std::vector<enforce::Change> more{{"other/f", ChangeKind::file}};
        auto keep_f = [](std::string_view rel, bool) { return rel == "other/f"; };  // a keep() that refuses the dir
        auto r2 = enforce::apply(l.up, l.ws, more, keep_f);
        REQUIRE(r2.ok());
        CHECK(r2->discarded == std::vector<Discarded>{{"other/f", ChangeKind::file}});
        CHECK(efs::is_symlink(l.ws / "other"));
        CHECK(tree_of(outside).empty());
    }
}

TEST_CASE("names with newlines and spaces land exactly", "[enforce]")
{
    Layers l;
    put_file(l.up / "dist/with space/new\nline.txt", "1");
    put_file(l.ws / "dist/old\nfile", "o");
    put_whiteout(l.up / "dist/old\nfile");
    auto r = l.apply(keep_prefixes({"dist"}));
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/with space", "d"}, {"dist/with space/new\nline.txt", "f:1"}});
    CHECK(r.discarded.empty());
}

TEST_CASE("overlay xattrs are stripped from everything applied; the task's own are kept", "[enforce]")
{
    Layers l;
    put_file(l.ws / "dist/copied-up.js", "old");
    put_dir(l.up / "dist");
    put_xattr(l.up / "dist", "user.overlay.impure", "y");
    put_file(l.up / "dist/copied-up.js", "new");
    put_xattr(l.up / "dist/copied-up.js", "user.overlay.origin", "");
    put_xattr(l.up / "dist/copied-up.js", "user.mine", "kept");
    put_file(l.up / "dist/new/deep/f", "f");  // a created directory, moved whole
    put_xattr(l.up / "dist/new", "user.overlay.impure", "y");
    put_xattr(l.up / "dist/new/deep/f", "user.overlay.origin", "");
    // A task's own setxattr of user.overlay.opaque is stored escaped; it is overlay metadata all the same.
    put_xattr(l.up / "dist/new/deep/f", "user.overlay.overlay.opaque", "y");

    auto r = l.apply(keep_prefixes({"dist"}));
    CHECK(r.discarded.empty());
    CHECK(xattrs_of(l.ws / "dist/copied-up.js") == std::vector<std::string>{"user.mine"});
    CHECK(xattrs_of(l.ws / "dist/new").empty());
    CHECK(xattrs_of(l.ws / "dist/new/deep").empty());
    CHECK(xattrs_of(l.ws / "dist/new/deep/f").empty());
}

TEST_CASE("removed directories: inside an output whole; above one, only the outputs in it", "[enforce]")
{
    Layers l;
    put_file(l.ws / "dist/a/b.js", "b");
    put_file(l.ws / "target/release/app", "bin");
    put_file(l.ws / "target/debug/app", "dbg");
    put_whiteout(l.up / "dist/a");
    put_whiteout(l.up / "target");  // rm -rf target, with target/release the output
    auto r = l.apply(keep_prefixes({"dist", "target/release"}));
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"target", "d"}, {"target/debug", "d"}, {"target/debug/app", "f:dbg"}});
    CHECK(r.discarded == std::vector<Discarded>{{"target/debug", ChangeKind::removed}});
}

TEST_CASE("a replaced directory partly kept: its kept part replaced, the rest left and listed", "[enforce]")
{
    // Output dist/app only; the task did rm -rf dist; mkdir -p dist/app; write dist/app/new.js, dist/junk.
    Layers l;
    put_file(l.ws / "dist/app/old.js", "old");
    put_file(l.ws / "dist/other.txt", "other");
    put_opaque_dir(l.up / "dist");
    put_file(l.up / "dist/app/new.js", "new");
    put_file(l.up / "dist/junk", "junk");
    auto r = l.apply(keep_prefixes({"dist/app"}));
    CHECK(tree_of(l.ws) ==
          Tree{{"dist", "d"}, {"dist/app", "d"}, {"dist/app/new.js", "f:new"}, {"dist/other.txt", "f:other"}});
    CHECK(r.discarded ==
          std::vector<Discarded>{{"dist/other.txt", ChangeKind::removed}, {"dist/junk", ChangeKind::file}});
}

TEST_CASE("the zero-size xattr whiteout removes like the char device", "[enforce]")
{
    Layers l;
    put_file(l.ws / "dist/a", "a");
    put_file(l.ws / "dist/b", "b");
    put_opaque_dir(l.up / "dist", "x");
    put_xattr_whiteout(l.up / "dist/a");
    auto r = l.apply(keep_prefixes({"dist"}));
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/b", "f:b"}});
    CHECK(r.applied == 1);
}

TEST_CASE("a created directory that meets a workspace directory merges into it", "[enforce]")
{
    // Two commands run side by side both made dist; the first one's is applied already.
    Layers l;
    put_file(l.up / "dist/b.js", "b");
    auto changes = enforce::read_upper_layer(l.up, l.ws);
    REQUIRE(changes.ok());
    put_file(l.ws / "dist/a.js", "a");
    auto r = enforce::apply(l.up, l.ws, *changes, keep_prefixes({"dist"}));
    REQUIRE(r.ok());
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/a.js", "f:a"}, {"dist/b.js", "f:b"}});
}

TEST_CASE("fifos are applied; modes and content travel with a rename", "[enforce]")
{
    Layers l;
    put_dir(l.up / "out");
    REQUIRE(::mkfifo((l.up / "out/pipe").c_str(), 0600) == 0);
    put_file(l.up / "out/tool", "#!/bin/sh", 0755);
    auto r = l.apply(keep_prefixes({"out"}));
    CHECK(tree_of(l.ws) == Tree{{"out", "d"}, {"out/pipe", "p"}, {"out/tool", "f:#!/bin/sh"}});
    CHECK((efs::status(l.ws / "out/tool").permissions() & efs::perms::owner_exec) != efs::perms::none);
    CHECK(r.applied == 3);
}

TEST_CASE("across filesystems entries are copied: data, mode, times, links", "[enforce]")
{
    // /dev/shm is a tmpfs on most systems; where it is not, or is the same filesystem, nothing to test.
    struct stat shm, tmp;
    if (::stat("/dev/shm", &shm) != 0 || ::access("/dev/shm", W_OK) != 0) {
        qk::test::skip("no writable /dev/shm");
        return;
    }
    TempDir ws_dir("qk-enforce-xdev");
    REQUIRE(::stat(ws_dir.path.c_str(), &tmp) == 0);
    if (shm.st_dev == tmp.st_dev) {
        qk::test::skip("/dev/shm is on the temporary directory's filesystem");
        return;
    }
    std::string t = "/dev/shm/qk-enforce-xdev-XXXXXX";
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    efs::path up = t;
    put_file(ws_dir.path / "dist/old.js", "old");
    put_opaque_dir(up / "dist");
    put_file(up / "dist/app.js", "app", 0751);
    put_link(up / "dist/link", "app.js");
    put_file(up / "lib/x.js", "x");
    struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
    REQUIRE(::utimensat(AT_FDCWD, (up / "dist/app.js").c_str(), times, 0) == 0);

    auto changes = enforce::read_upper_layer(up, ws_dir.path);
    REQUIRE(changes.ok());
    auto r = enforce::apply(up, ws_dir.path, *changes, keep_prefixes({"dist", "lib/x.js"}));
    INFO((r.ok() ? std::string() : r.error().message));
    REQUIRE(r.ok());
    CHECK(tree_of(ws_dir.path) ==
          Tree{{"dist", "d"}, {"dist/app.js", "f:app"}, {"dist/link", "l:app.js"}, {"lib", "d"}, {"lib/x.js", "f:x"}});
    struct stat st;
    REQUIRE(::stat((ws_dir.path / "dist/app.js").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0751);
    CHECK(st.st_mtim.tv_sec == 1000000000);
    CHECK(xattrs_of(ws_dir.path / "dist").empty());
    CHECK(tree_of(up) == Tree{{"lib", "d"}});  // moved, not copied and left; lib itself was made, not moved
    efs::remove_all(up);
}

TEST_CASE("changes that are not plain relative paths are refused", "[enforce]")
{
    Layers l;
    for (const char* bad : {"../escape", "/abs", "a//b", "a/./b", ""}) {
        std::vector<enforce::Change> changes{{bad, ChangeKind::file}};
        auto r = enforce::apply(l.up, l.ws, changes, [](std::string_view, bool) { return true; });
        CHECK(!r.ok());
    }
}

TEST_CASE("an error names the entry and says the outputs are incomplete", "[enforce]")
{
    Layers l;
    put_dir(l.ws / "dist");
    std::vector<enforce::Change> changes{{"dist/missing-from-upper", ChangeKind::file}};
    auto r = enforce::apply(l.up, l.ws, changes, keep_prefixes({"dist"}));
    REQUIRE(!r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("dist/missing-from-upper") && Catch::Contains("incomplete"));
}

TEST_CASE("with a trash, what applied entries replace and removals take out is moved there, not deleted", "[enforce]")
{
    Layers l;
    efs::path trash = l.dir.path / "trash";
    put_dir(trash);
    put_file(l.ws / "dist/old/a.js", "old-a");
    put_file(l.ws / "lib/mod.js", "old-mod");
    put_file(l.ws / "lib/gone.js", "gone");
    put_opaque_dir(l.up / "dist");
    put_file(l.up / "dist/new.js", "new");
    put_file(l.up / "lib/mod.js", "new-mod");
    put_whiteout(l.up / "lib/gone.js");

    auto changes = enforce::read_upper_layer(l.up, l.ws);
    REQUIRE(changes.ok());
    auto r = enforce::apply(l.up, l.ws, *changes, keep_prefixes({"dist", "lib"}), trash);
    INFO((r.ok() ? std::string() : r.error().message));
    REQUIRE(r.ok());
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/new.js", "f:new"}, {"lib", "d"}, {"lib/mod.js", "f:new-mod"}});
    // The old dist whole, the old lib/mod.js and lib/gone.js, each under a name of the trash's own.
    std::multiset<std::string> contents;
    for (const auto& [path, what] : tree_of(trash))
        contents.insert(what);
    CHECK(contents == std::multiset<std::string>{"d", "d", "f:old-a", "f:old-mod", "f:gone"});
    // Nothing of the workspace's old content is left in the upper, only the whiteout that asked for a removal.
    CHECK(tree_of(l.up) == Tree{{"lib", "d"}, {"lib/gone.js", "c"}});
}

TEST_CASE("a trash on another filesystem than the workspace falls back to deleting", "[enforce]")
{
    struct stat shm, tmp;
    Layers l;
    if (::stat("/dev/shm", &shm) != 0 || ::stat(l.dir.path.c_str(), &tmp) != 0 || shm.st_dev == tmp.st_dev ||
        ::access("/dev/shm", W_OK) != 0) {
        qk::test::skip("no writable /dev/shm on another filesystem than the temporary directory");
        return;
    }
    std::string t = "/dev/shm/qk-enforce-trash-XXXXXX";
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    put_file(l.ws / "dist/a", "old");
    put_file(l.up / "dist/a", "new");
    put_file(l.ws / "dist/b", "b");
    put_whiteout(l.up / "dist/b");
    auto changes = enforce::read_upper_layer(l.up, l.ws);
    REQUIRE(changes.ok());
    auto r = enforce::apply(l.up, l.ws, *changes, keep_prefixes({"dist"}), t);
    REQUIRE(r.ok());
    CHECK(tree_of(l.ws) == Tree{{"dist", "d"}, {"dist/a", "f:new"}});
    CHECK(tree_of(t).empty());
    efs::remove_all(t);
}
