// The file index: what the scan lists (ignore files, always-skipped directories, symlinks), ownership,
// lookups, content hashes, the persistent hash cache and concurrent hashing.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "qk/key/file_index.hpp"

using qk::key::FileIndex;
using qk::key::Hash128;
using qk::workspace::Workspace;
namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

namespace {

struct TempWorkspace {
    fs::path root;
    TempWorkspace()
    {
        std::string t = (fs::temp_directory_path() / "qk-files-XXXXXX").string();
        REQUIRE(::mkdtemp(t.data()) != nullptr);
        root = t;
        write("nx.json", "{}");
    }
    ~TempWorkspace()
    {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
    void write(const std::string& rel, const std::string& text) const
    {
        fs::create_directories((root / rel).parent_path());
        std::ofstream(root / rel, std::ios::binary | std::ios::trunc) << text;
    }
    void project(const std::string& dir, const std::string& name) const
    {
        write(dir + "/project.json", "{ \"name\": \"" + name + "\" }");
    }
    Workspace load() const
    {
        auto ws = Workspace::load(root);
        INFO((ws.ok() ? std::string() : ws.error().message));
        REQUIRE(ws.ok());
        return std::move(*ws);
    }
    FileIndex scan(const Workspace& ws) const
    {
        auto index = FileIndex::scan(ws);
        INFO((index.ok() ? std::string() : index.error().message));
        REQUIRE(index.ok());
        return std::move(*index);
    }
    // Every file's mtime `seconds` ago, so that the hash cache does not count it as racy.
    void age(int seconds) const
    {
        for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
            if (it->path().filename() == ".qk") {
                it.disable_recursion_pending();
                continue;
            }
            set_mtime(it->path(), ::time(nullptr) - seconds);
        }
    }
    static void set_mtime(const fs::path& p, time_t when)
    {
        struct timespec times[2] = {{when, 0}, {when, 0}};
        REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
    }
};

std::vector<std::uint32_t> all_of(const FileIndex& index)
{
    std::vector<std::uint32_t> all(index.files().size());
    for (std::uint32_t i = 0; i < all.size(); ++i)
        all[i] = i;
    return all;
}

void hash_all(FileIndex& index)
{
    auto s = index.hash(all_of(index));
    INFO((s.ok() ? std::string() : s.error().message));
    REQUIRE(s.ok());
}

std::size_t at(const FileIndex& index, const std::string& path)
{
    auto i = index.find(path);
    INFO("path " << path);
    REQUIRE(i.has_value());
    return *i;
}


}  // namespace

TEST_CASE("the scan honours .gitignore, .ignore, .nxignore and .git/info/exclude, and skips node_modules, .git, .qk",
          "[key][files]")
{
    TempWorkspace t;
    t.write(".gitignore", "dist/\n*.log\nby-gitignore\n");
    t.write(".nxignore", "secret.txt\n!keep.log\n");  // .nxignore outranks .gitignore
    t.write(".ignore", "by-ignore\n");
    t.write(".git/info/exclude", "by-exclude\n");
    t.write(".git/HEAD", "ref: refs/heads/main\n");
    t.write("by-gitignore", "");
    t.write("by-ignore", "");
    t.write("by-exclude", "");
    t.write("secret.txt", "");
    t.write("keep.log", "");
    t.write("other.log", "");
    t.write("dist/out.js", "");
    t.write("node_modules/pkg/index.js", "");
    t.write(".qk/cache/x", "");
    t.write("packages/a/.gitignore", "generated/\n!debug.log\n");
    t.write("packages/a/.nxignore", "/local.txt\n");
    t.write("packages/a/debug.log", "");
    t.write("packages/a/local.txt", "");
    t.write("packages/a/src/local.txt", "");
    t.write("packages/a/generated/g.ts", "");
    t.write("packages/a/dist/out.js", "");
    t.write("packages/a/node_modules/dep/index.js", "");
    t.write("packages/a/sub/.git", "gitdir: elsewhere\n");  // a submodule's .git file
    t.write("packages/a/src/index.ts", "");
    t.write("packages/a/dist-not/x.js", "");

    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    CHECK(index.files() == Strings{".gitignore", ".ignore", ".nxignore", "keep.log", "nx.json", "packages/a/.gitignore",
                                   "packages/a/.nxignore", "packages/a/debug.log", "packages/a/dist-not/x.js",
                                   "packages/a/src/index.ts", "packages/a/src/local.txt"});
}

TEST_CASE("the scan lists what git ls-files lists as untracked and not ignored", "[key][files]")
{
    TempWorkspace t;
    REQUIRE(qk::test::shell_output("cd '" + t.root.string() + "' && git init -q . 2>&1").empty());
    t.write(".gitignore", "*.o\n!keep.o\nout/\n/top\ndocs/**/*.tmp\n");
    t.write(".git/info/exclude", "*.swp\n");
    t.write("lib/.gitignore", "!*.swp\nlocal/\n");
    for (const char* f : {"a.o", "keep.o", "out/x", "top", "lib/top", "docs/a/b/c.tmp", "docs/c.tmp", "x.swp",
                          "lib/x.swp", "lib/local/y", "lib/src/local/z", "lib/a-b", "lib/a/b", "lib0", "a b.txt"})
        t.write(f, "content");
    fs::create_symlink("lib", t.root / "lib-link");
    // Enough directories for the scan to walk subtrees in parallel, carrying the rules above them.
    for (int i = 0; i < 40; ++i) {
        std::string dir = "pkg" + std::to_string(i) + "/";
        t.write(dir + "src/a.o", "");
        t.write(dir + "src/keep.o", "");
        t.write(dir + "src/deep/x.swp", "");
        t.write(dir + "out/y", "");
        t.write(dir + "z-" + std::to_string(i), "");
        if (i % 3 == 0)
            t.write(dir + ".gitignore", "z-*\n!keep.o\nsrc/*.o\n");
    }

    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    std::string out = qk::test::shell_output("cd '" + t.root.string() + "' && HOME='" + t.root.string() +
                          "' GIT_CONFIG_NOSYSTEM=1 git ls-files -o --exclude-standard -z");
    Strings git_files;
    for (std::size_t pos = 0, end; (end = out.find('\0', pos)) != std::string::npos; pos = end + 1)
        git_files.push_back(out.substr(pos, end - pos));
    std::sort(git_files.begin(), git_files.end());
    CHECK(index.files() == git_files);
    CHECK(std::is_sorted(index.files().begin(), index.files().end()));
}

TEST_CASE("symbolic links are listed, not followed; the list is in bytewise order", "[key][files]")
{
    TempWorkspace t;
    t.write("a/x", "x");
    t.write("a-b", "");
    t.write("target.txt", "hello");
    fs::create_symlink("a", t.root / "link-dir");
    fs::create_symlink("target.txt", t.root / "link-file");
    fs::create_symlink("does-not-exist", t.root / "dangling");
    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    CHECK(index.files() == Strings{"a-b", "a/x", "dangling", "link-dir", "link-file", "nx.json", "target.txt"});
}

TEST_CASE("each file belongs to the project holding it most closely; the root project takes the rest", "[key][files]")
{
    TempWorkspace t;
    t.project(".", "root");
    t.project("packages/a", "a");
    t.project("packages/a/nested", "nested");
    t.project("packages/ab", "ab");
    t.write("packages/a/src/x.ts", "");
    t.write("packages/a/nested/y.ts", "");
    t.write("packages/ab/z.ts", "");
    t.write("packages/a-c/w.ts", "");
    t.write("docs/readme.md", "");
    Workspace ws = t.load();
    FileIndex index = t.scan(ws);

    for (std::size_t i = 0; i < index.files().size(); ++i) {
        INFO("file " << index.files()[i]);
        const auto* p = ws.project_owning(index.files()[i]);
        REQUIRE(p != nullptr);
        REQUIRE(index.owner(i).has_value());
        CHECK(ws.projects()[*index.owner(i)].name == p->name);
    }
    auto names_of = [&](const std::string& project) {
        Strings out;
        for (std::uint32_t f : index.files_of(*ws.project_index(project)))
            out.push_back(index.files()[f]);
        return out;
    };
    CHECK(names_of("a") == Strings{"packages/a/project.json", "packages/a/src/x.ts"});
    CHECK(names_of("nested") == Strings{"packages/a/nested/project.json", "packages/a/nested/y.ts"});
    CHECK(names_of("ab") == Strings{"packages/ab/project.json", "packages/ab/z.ts"});
    CHECK(names_of("root") == Strings{"docs/readme.md", "nx.json", "packages/a-c/w.ts", "project.json"});
    CHECK(index.files_of(99).empty());
}

TEST_CASE("without a root project, files outside every project have no owner", "[key][files]")
{
    TempWorkspace t;
    t.project("apps/web", "web");
    t.write("tools/x.sh", "");
    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    CHECK_FALSE(index.owner(at(index, "tools/x.sh")).has_value());
    CHECK_FALSE(index.owner(at(index, "nx.json")).has_value());
    CHECK(index.owner(at(index, "apps/web/project.json")) == ws.project_index("web"));
}

TEST_CASE("find and range_under search the sorted list", "[key][files]")
{
    TempWorkspace t;
    for (const char* f : {"a/x", "a/y/z", "a-b", "a0", "ab/c", "b"})
        t.write(f, "");
    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    REQUIRE(index.files() == Strings{"a-b", "a/x", "a/y/z", "a0", "ab/c", "b", "nx.json"});
    CHECK(index.find("a/y/z") == 2u);
    CHECK_FALSE(index.find("a/y").has_value());
    CHECK_FALSE(index.find("zz").has_value());
    using Range = std::pair<std::size_t, std::size_t>;
    CHECK(index.range_under("") == Range{0, 7});
    CHECK(index.range_under("a") == Range{1, 3});
    CHECK(index.range_under("a/") == Range{1, 3});
    CHECK(index.range_under("a/y") == Range{2, 3});
    CHECK(index.range_under("a/y/z") == Range{2, 3});  // a file: itself
    CHECK(index.range_under("b") == Range{5, 6});
    CHECK(index.range_under("c").first == index.range_under("c").second);
}

TEST_CASE("content hashes equal hash_file; a symlink hashes its link text, unlike a file holding it", "[key][files]")
{
    TempWorkspace t;
    t.write("a.txt", "hello");
    t.write("target.txt", "target.txt");  // the same bytes as the link's text
    t.write("mid.bin", std::string(std::size_t{300} * 1024, 'x'));
    t.write("big.bin", std::string(std::size_t{3} * 1024 * 1024 + 7, 'y'));  // streamed rather than read whole
    fs::create_symlink("target.txt", t.root / "link");
    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    hash_all(index);
    for (const char* f : {"a.txt", "target.txt", "mid.bin", "big.bin", "nx.json"})
        CHECK(index.hash_of(at(index, f)) == *qk::key::hash_file(t.root / f));
    Hash128 link = index.hash_of(at(index, "link"));
    CHECK(link != index.hash_of(at(index, "target.txt")));
    CHECK(link != qk::key::hash_bytes("target.txt"));
    CHECK_THROWS_AS(FileIndex(t.scan(ws)).hash_of(0), qk::FatalError);  // not hashed yet: a caller's bug
}

TEST_CASE("the hash cache is reused when nothing changed and refreshed for a changed file", "[key][files]")
{
    TempWorkspace t;
    t.write("a.txt", "aaaa");
    t.write("b.txt", "bbbb");
    t.write("c/d.txt", "dddd");
    t.age(100);
    Workspace ws = t.load();
    {
        FileIndex index = t.scan(ws);
        CHECK_FALSE(fs::exists(FileIndex::hash_cache_path(t.root)));
        hash_all(index);
        CHECK(index.hash_counts().read == 4);
        REQUIRE(index.save_hash_cache().ok());
        REQUIRE(fs::exists(FileIndex::hash_cache_path(t.root)));
        std::ifstream ignore(t.root / ".qk/.gitignore");
        CHECK(std::string(std::istreambuf_iterator<char>(ignore), {}) == "*\n");
    }
    auto written = fs::last_write_time(FileIndex::hash_cache_path(t.root));
    {
        FileIndex index = t.scan(ws);
        CHECK(index.files() == Strings{"a.txt", "b.txt", "c/d.txt", "nx.json"});  // .qk is not listed
        hash_all(index);
        CHECK(index.hash_counts().read == 0);
        CHECK(index.hash_counts().reused == 4);
        CHECK(index.hash_of(at(index, "b.txt")) == qk::key::hash_bytes("bbbb"));
        REQUIRE(index.save_hash_cache().ok());  // nothing new: not rewritten
        CHECK(fs::last_write_time(FileIndex::hash_cache_path(t.root)) == written);
    }
    // Same size, new content, an mtime that moved (still well in the past, so not racy).
    t.write("b.txt", "BBBB");
    TempWorkspace::set_mtime(t.root / "b.txt", ::time(nullptr) - 50);
    {
        FileIndex index = t.scan(ws);
        hash_all(index);
        CHECK(index.hash_counts().read == 1);
        CHECK(index.hash_of(at(index, "b.txt")) == qk::key::hash_bytes("BBBB"));
        REQUIRE(index.save_hash_cache().ok());
    }
    {
        FileIndex index = t.scan(ws);
        hash_all(index);
        CHECK(index.hash_counts().read == 0);
        CHECK(index.hash_of(at(index, "b.txt")) == qk::key::hash_bytes("BBBB"));
    }
}

TEST_CASE("a file modified close to when the cache was written is hashed again next time", "[key][files]")
{
    TempWorkspace t;
    t.write("old.txt", "old");
    t.age(100);
    t.write("fresh.txt", "fresh");  // mtime: now, as the cache file's will be
    Workspace ws = t.load();
    {
        FileIndex index = t.scan(ws);
        hash_all(index);
        REQUIRE(index.save_hash_cache().ok());
    }
    FileIndex index = t.scan(ws);
    REQUIRE(index.hash(std::vector<std::uint32_t>{static_cast<std::uint32_t>(at(index, "old.txt"))}).ok());
    CHECK(index.hash_counts().read == 0);
    REQUIRE(index.hash(std::vector<std::uint32_t>{static_cast<std::uint32_t>(at(index, "fresh.txt"))}).ok());
    CHECK(index.hash_counts().read == 1);  // racy: read although unchanged
    CHECK(index.hash_of(at(index, "fresh.txt")) == qk::key::hash_bytes("fresh"));
}

TEST_CASE("a corrupt or foreign hash cache is ignored and rewritten", "[key][files]")
{
    TempWorkspace t;
    t.write("a.txt", "aaaa");
    t.age(100);
    Workspace ws = t.load();
    {
        FileIndex index = t.scan(ws);
        hash_all(index);
        REQUIRE(index.save_hash_cache().ok());
    }
    fs::path cache = FileIndex::hash_cache_path(t.root);
    std::string good;
    {
        std::ifstream in(cache, std::ios::binary);
        good.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::string flipped = good;
    flipped[flipped.size() / 2] ^= 1;
    for (const std::string& bad : {std::string("garbage"), good.substr(0, good.size() - 5), flipped, std::string()}) {
        std::ofstream(cache, std::ios::binary | std::ios::trunc) << bad;
        FileIndex index = t.scan(ws);
        hash_all(index);
        CHECK(index.hash_counts().read == 2);
        CHECK(index.hash_of(at(index, "a.txt")) == qk::key::hash_bytes("aaaa"));
        REQUIRE(index.save_hash_cache().ok());
    }
    FileIndex index = t.scan(ws);
    hash_all(index);
    CHECK(index.hash_counts().reused == 2);  // the rewritten cache is good again
}

TEST_CASE("a file removed between scan and hash is an error naming it", "[key][files]")
{
    TempWorkspace t;
    t.write("src/gone.ts", "x");
    t.write("src/here.ts", "y");
    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    fs::remove(t.root / "src/gone.ts");
    auto s = index.hash(all_of(index));
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message, Catch::Contains("cannot hash src/gone.ts: it was removed after qk listed"));
    // The others are still hashable, and the missing one fails again rather than hashing as nothing.
    REQUIRE(index.hash(std::vector<std::uint32_t>{static_cast<std::uint32_t>(at(index, "src/here.ts"))}).ok());
    CHECK_FALSE(index.hash(std::vector<std::uint32_t>{static_cast<std::uint32_t>(at(index, "src/gone.ts"))}).ok());
}

TEST_CASE("the scan reports a workspace root it cannot read", "[key][files]")
{
    TempWorkspace t;
    Workspace ws = t.load();
    fs::path moved = t.root.string() + "-moved";
    fs::rename(t.root, moved);
    auto index = FileIndex::scan(ws);
    fs::rename(moved, t.root);
    REQUIRE_FALSE(index.ok());
    CHECK_THAT(index.error().message, Catch::Contains("cannot read the workspace root " + t.root.string()));
}

TEST_CASE("hash() called from several threads at once hashes each file once", "[key][files]")
{
    TempWorkspace t;
    for (int i = 0; i < 400; ++i)
        t.write("d" + std::to_string(i % 20) + "/f" + std::to_string(i), "content " + std::to_string(i));
    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    const std::size_t n = index.files().size();

    std::vector<std::thread> threads;
    std::vector<int> ok(8, 0);
    for (int w = 0; w < 8; ++w) {
        threads.emplace_back([&, w] {
            // Overlapping halves, in different orders, with duplicates.
            std::vector<std::uint32_t> mine;
            for (std::uint32_t i = 0; i < n; ++i)
                if ((i + w) % 2 == 0 || i % 7 == 0)
                    mine.push_back(w % 2 ? static_cast<std::uint32_t>(n - 1 - i) : i);
            mine.push_back(mine.front());
            bool good = index.hash(mine).ok();
            for (std::uint32_t f : mine)
                good = good && index.hash_of(f) == *qk::key::hash_file(t.root / index.files()[f]);
            ok[w] = good;
        });
    }
    for (auto& th : threads)
        th.join();
    CHECK(ok == std::vector<int>(8, 1));
    CHECK(index.hash_counts().read == n);
    CHECK(index.hash_counts().reused == 0);
}

TEST_CASE("the scan remembers where it skipped .git, .qk and node_modules; holds_special asks under a directory",
          "[key][files]")
{
    TempWorkspace t;
    t.write(".gitignore", "ignored/\n");
    t.write(".git/HEAD", "ref: refs/heads/main\n");
    t.write(".qk/cache/x", "");
    t.write("node_modules/pkg/index.js", "");
    t.write("node_modules/pkg/node_modules/dep/index.js", "");  // under a skipped one: never seen
    t.write("packages/a/src/index.ts", "");
    t.write("packages/a/node_modules/dep/index.js", "");
    t.write("packages/a/lib/deep/node_modules/x.js", "");  // nested deeper in the same package
    t.write("packages/b/.git/HEAD", "ref: refs/heads/main\n");  // a package's own repository
    t.write("packages/b/index.ts", "");
    t.write("packages/c/.git", "gitdir: ../../.git/worktrees/c\n");  // a worktree's .git file
    t.write("packages/d/NODE_MODULES/x.js", "");  // the same name in another case
    t.write("packages/d/Node_Modules-not/x.js", "");
    t.write("packages-x/.qk", "");  // .qk below the root is skipped as well
    t.write("ignored/node_modules/x.js", "");  // an ignored directory is not entered
    fs::create_symlink("packages/a/node_modules", t.root / "packages/e-node_modules-link");
    fs::create_directories(t.root / "packages/e");
    fs::create_symlink("../a/node_modules", t.root / "packages/e/node_modules");  // a link, skipped by name too
    // Enough directories for the scan to split the walk into subtrees walked in parallel.
    for (int i = 0; i < 40; ++i)
        t.write("many/m" + std::to_string(i) + (i % 5 == 0 ? "/node_modules/x" : "/x"), "");

    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    Strings expected = {".git",
                        ".qk",
                        "node_modules",
                        "packages-x/.qk",
                        "packages/a/lib/deep/node_modules",
                        "packages/a/node_modules",
                        "packages/b/.git",
                        "packages/c/.git",
                        "packages/d/NODE_MODULES",
                        "packages/e/node_modules"};
    for (int i = 0; i < 40; i += 5)
        expected.push_back("many/m" + std::to_string(i) + "/node_modules");
    std::sort(expected.begin(), expected.end());
    CHECK(index.special_entries() == expected);
    CHECK(index.find("packages/d/Node_Modules-not/x.js").has_value());
    CHECK(index.find("packages/e-node_modules-link").has_value());

    CHECK(index.holds_special(""));
    CHECK(index.holds_special("."));
    CHECK(index.holds_special("packages"));
    CHECK(index.holds_special("packages/"));
    CHECK(index.holds_special("packages/a"));
    CHECK(index.holds_special("packages/a/lib"));
    CHECK(index.holds_special("packages/a/lib/deep"));
    CHECK_FALSE(index.holds_special("packages/a/lib/deep/node_modules"));  // the entry itself is not under it
    CHECK_FALSE(index.holds_special("packages/a/src"));
    CHECK(index.holds_special("packages/b"));
    CHECK(index.holds_special("packages/c"));
    CHECK(index.holds_special("packages/d"));
    CHECK_FALSE(index.holds_special("packages/d/Node_Modules-not"));
    CHECK(index.holds_special("packages-x"));
    CHECK_FALSE(index.holds_special("packages/a/li"));  // a prefix of a name is not a directory holding it
    CHECK_FALSE(index.holds_special("package"));
    CHECK_FALSE(index.holds_special("ignored"));
    CHECK_FALSE(index.holds_special("many/m1"));
    CHECK(index.holds_special("many/m35"));
    CHECK_FALSE(index.holds_special("zzz"));
}

TEST_CASE("a workspace without special entries holds none, not even under the root", "[key][files]")
{
    TempWorkspace t;
    t.write("src/a.ts", "");
    Workspace ws = t.load();
    FileIndex index = t.scan(ws);
    CHECK(index.special_entries().empty());
    CHECK_FALSE(index.holds_special(""));
    CHECK_FALSE(index.holds_special("src"));
}

TEST_CASE("a file outside the index keeps its hash in the persistent cache while its stamp holds", "[key][files]")
{
    qk::test::TempDir ws;
    ws.write(".gitignore", "dist\n");
    ws.write("src/a.ts", "a\n");
    ws.write("dist/out.js", "out 1\n");
    ws.write("dist/other.js", "other\n");
    // Written long enough ago that the cache does not count them as racy (changed within its tick).
    for (const char* rel : {"dist/out.js", "dist/other.js"})
        std::filesystem::last_write_time(ws.path / rel,
                                         std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
    auto lstat_of = [&](const char* rel) {
        struct stat st {};
        REQUIRE(::lstat((ws.path / rel).c_str(), &st) == 0);
        return st;
    };
    {
        auto index = FileIndex::scan_tree(ws.path);
        REQUIRE(index);
        CHECK_FALSE(index->find("dist/out.js"));  // ignored: outside the index
        auto h = index->hash_elsewhere("dist/out.js", lstat_of("dist/out.js"));
        REQUIRE(h);
        CHECK(*h == qk::key::hash_bytes("out 1\n"));
        REQUIRE(index->hash_elsewhere("dist/other.js", lstat_of("dist/other.js")));
        CHECK(index->hash_counts().read == 2);
        REQUIRE(index->save_hash_cache(true));
    }
    {
        auto index = FileIndex::scan_tree(ws.path);
        REQUIRE(index);
        auto h = index->hash_elsewhere("dist/out.js", lstat_of("dist/out.js"));
        REQUIRE(h);
        CHECK(*h == qk::key::hash_bytes("out 1\n"));
        CHECK(index->hash_counts().read == 0);  // taken from the cache, not read
        CHECK(index->hash_counts().reused == 1);
        // Changed (its size and times move): read again.
        ws.write("dist/out.js", "out 2, longer\n");
        std::filesystem::last_write_time(ws.path / "dist/out.js",
                                         std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
        h = index->hash_elsewhere("dist/out.js", lstat_of("dist/out.js"));
        REQUIRE(h);
        CHECK(*h == qk::key::hash_bytes("out 2, longer\n"));
        CHECK(index->hash_counts().read == 1);
        // The run's last save drops dist/other.js, which this run did not use.
        REQUIRE(index->save_hash_cache(true));
    }
    auto index = FileIndex::scan_tree(ws.path);
    REQUIRE(index);
    REQUIRE(index->hash_elsewhere("dist/other.js", lstat_of("dist/other.js")));
    CHECK(index->hash_counts().read == 1);
    REQUIRE(index->hash_elsewhere("dist/out.js", lstat_of("dist/out.js")));
    CHECK(index->hash_counts().reused == 1);
}

TEST_CASE("a file swapped in after the caller looked is hashed but its hash is not kept", "[key][files]")
{
    qk::test::TempDir ws;
    ws.write(".gitignore", "dist\n");
    ws.write("dist/out.js", "first\n");
    struct stat before {};
    REQUIRE(::lstat((ws.path / "dist/out.js").c_str(), &before) == 0);
    ws.write("dist/out.js", "second, and longer\n");  // the caller's stat now describes another file
    auto index = FileIndex::scan_tree(ws.path);
    REQUIRE(index);
    auto h = index->hash_elsewhere("dist/out.js", before);
    REQUIRE(h);
    CHECK(*h == qk::key::hash_bytes("second, and longer\n"));
    h = index->hash_elsewhere("dist/out.js", before);  // not taken from what the first call saw
    REQUIRE(h);
    CHECK(index->hash_counts().read == 2);
    CHECK(index->hash_counts().reused == 0);
}
