// FileIndex::changed_since_hashed: the guard before a result is stored under its key. Any change to a
// file the key holds since it was hashed counts, an edit put back (content and mtime) included; a file
// the task may write over (its own output that its inputs hold too) is judged by its content alone.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "qk/key/file_index.hpp"

using qk::key::FileIndex;
using Kind = qk::key::FileIndex::Change::Kind;
namespace fs = std::filesystem;

namespace {

struct Tree {
    fs::path root;
    Tree()
    {
        std::string t = (fs::temp_directory_path() / "qk-changes-XXXXXX").string();
        REQUIRE(::mkdtemp(t.data()) != nullptr);
        root = t;
        write("nx.json", "{}");
        write("src/a.txt", "a\n");
        write("src/b.txt", "b\n");
        write("dist/out.txt", "out\n");
    }
    ~Tree()
    {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
    void write(const std::string& rel, const std::string& text) const
    {
        fs::create_directories((root / rel).parent_path());
        std::ofstream(root / rel, std::ios::binary | std::ios::trunc) << text;
    }
    struct stat lstat(const std::string& rel) const
    {
        struct stat st {};
        REQUIRE(::lstat((root / rel).c_str(), &st) == 0);
        return st;
    }
    // Sets the mtime back to what `st` says, as `touch -r` does: the ctime moves to now all the same.
    void put_mtime_back(const std::string& rel, const struct stat& st) const
    {
        struct timespec times[2] = {st.st_atim, st.st_mtim};
        REQUIRE(::utimensat(AT_FDCWD, (root / rel).c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
    }
};

std::vector<std::uint32_t> all_files(const FileIndex& index)
{
    std::vector<std::uint32_t> all(index.files().size());
    for (std::uint32_t i = 0; i < all.size(); ++i)
        all[i] = i;
    return all;
}

// The index of the workspace with every file hashed, as a run's keys leave it.
FileIndex hashed(const Tree& w)
{
    auto ws = qk::workspace::Workspace::load(w.root);
    REQUIRE(ws.ok());
    auto index = FileIndex::scan(*ws);
    REQUIRE(index.ok());
    REQUIRE(index->hash(all_files(*index)).ok());
    return std::move(*index);
}

// Waits until the coarse clock the kernel stamps files with has moved past `st`'s ctime, so that a write
// now gives a ctime of its own (no sleeping for a fixed time: the clock is read until it moves).
void after_ctime_of(const struct stat& st)
{
    for (;;) {
        struct timespec now {};
        REQUIRE(::clock_gettime(CLOCK_REALTIME_COARSE, &now) == 0);
        if (now.tv_sec > st.st_ctim.tv_sec || (now.tv_sec == st.st_ctim.tv_sec && now.tv_nsec > st.st_ctim.tv_nsec))
            return;
        ::sched_yield();
    }
}

}  // namespace

TEST_CASE("nothing changed since the key was hashed is no change", "[key][files]")
{
    Tree w;
    FileIndex index = hashed(w);
    CHECK_FALSE(index.changed_since_hashed(all_files(index)).has_value());
}

TEST_CASE("another content, or a file removed, is a change naming the file", "[key][files]")
{
    Tree w;
    FileIndex index = hashed(w);
    SECTION("edited")
    {
        w.write("src/a.txt", "edited\n");
        auto c = index.changed_since_hashed(all_files(index));
        REQUIRE(c.has_value());
        CHECK(c->path == "src/a.txt");
        CHECK(c->kind == Kind::content);
    }
    SECTION("removed")
    {
        fs::remove(w.root / "src/b.txt");
        auto c = index.changed_since_hashed(all_files(index));
        REQUIRE(c.has_value());
        CHECK(c->path == "src/b.txt");
        CHECK(c->kind == Kind::removed);
    }
}

TEST_CASE("an edit put back, its mtime too, is a change: the ctime moved", "[key][files]")
{
    Tree w;
    FileIndex index = hashed(w);
    struct stat before = w.lstat("src/a.txt");
    after_ctime_of(before);
    w.write("src/a.txt", "edited\n");
    w.write("src/a.txt", "a\n");
    w.put_mtime_back("src/a.txt", before);
    struct stat after = w.lstat("src/a.txt");
    REQUIRE(after.st_mtim.tv_sec == before.st_mtim.tv_sec);
    REQUIRE(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    REQUIRE(after.st_size == before.st_size);
    REQUIRE(after.st_ino == before.st_ino);

    auto c = index.changed_since_hashed(all_files(index));
    REQUIRE(c.has_value());
    CHECK(c->path == "src/a.txt");
    CHECK(c->kind == Kind::rewritten);
    // Only for the path asked about: a rewrite of src/a.txt is the task's when its outputs name it.
    CHECK_FALSE(index.changed_since_hashed(all_files(index), [](std::string_view p) { return p == "src/a.txt"; }));
    CHECK(index.changed_since_hashed(all_files(index), [](std::string_view p) { return p == "dist/out.txt"; }));
}

TEST_CASE("an output its inputs hold, written over with the same bytes, is no change; another content is one",
          "[key][files]")
{
    Tree w;
    FileIndex index = hashed(w);
    auto output = [](std::string_view p) { return p.starts_with("dist/"); };
    after_ctime_of(w.lstat("dist/out.txt"));
    w.write("dist/out.txt", "out\n");
    CHECK_FALSE(index.changed_since_hashed(all_files(index), output));
    auto c = index.changed_since_hashed(all_files(index));  // no output named: written over is a change
    REQUIRE(c.has_value());
    CHECK(c->kind == Kind::rewritten);
    w.write("dist/out.txt", "another\n");
    c = index.changed_since_hashed(all_files(index), output);
    REQUIRE(c.has_value());
    CHECK(c->path == "dist/out.txt");
    CHECK(c->kind == Kind::content);
}

TEST_CASE("a file only its status changed of, chmod and back, is a change", "[key][files]")
{
    Tree w;
    FileIndex index = hashed(w);
    struct stat before = w.lstat("src/b.txt");
    after_ctime_of(before);
    REQUIRE(::chmod((w.root / "src/b.txt").c_str(), 0600) == 0);
    REQUIRE(::chmod((w.root / "src/b.txt").c_str(), before.st_mode & 07777) == 0);
    auto c = index.changed_since_hashed(all_files(index));
    REQUIRE(c.has_value());
    CHECK(c->path == "src/b.txt");
    CHECK(c->kind == Kind::rewritten);
}

TEST_CASE("files the key did not hash are not checked", "[key][files]")
{
    Tree w;
    auto ws = qk::workspace::Workspace::load(w.root);
    REQUIRE(ws.ok());
    auto index = FileIndex::scan(*ws);
    REQUIRE(index.ok());
    auto a = index->find("src/a.txt");
    REQUIRE(a.has_value());
    std::vector<std::uint32_t> one{static_cast<std::uint32_t>(*a)};
    REQUIRE(index->hash(one).ok());
    w.write("src/b.txt", "edited\n");
    CHECK_FALSE(index->changed_since_hashed(all_files(*index)).has_value());
    w.write("src/a.txt", "edited\n");
    CHECK(index->changed_since_hashed(all_files(*index)).has_value());
}
