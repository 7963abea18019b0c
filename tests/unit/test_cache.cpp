// LocalCache: store then restore gives back the outputs byte for byte; entries appear whole or not at
// all; a damaged entry is a miss that says why; nothing is written through a link or outside the workspace.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cache_workspace.hpp"
#include "test_support.hpp"
#include "qk/key/cache.hpp"
#include "qk/key/cache_in_place.hpp"

namespace fs = std::filesystem;
using namespace qk::key;
using qk::Status;
using qk::test::read;

namespace {

struct Sandbox : qk::test::CacheWorkspace {
    Sandbox() : CacheWorkspace("qk-cache") {}
};

// path -> "kind mode content-or-target": what a restore must give back exactly.
// Directories' modes come from the umask unless a test sets them: `dir_modes` false leaves them out.
std::map<std::string, std::string> snapshot(const fs::path& dir, bool dir_modes = true)
{
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
        struct stat st;
        REQUIRE(::lstat(it->path().c_str(), &st) == 0);
        std::string rel = fs::relative(it->path(), dir).string();
        std::string mode = std::to_string(st.st_mode & 07777);
        if (S_ISLNK(st.st_mode))
            out[rel] = "link " + fs::read_symlink(it->path()).string();
        else if (S_ISDIR(st.st_mode))
            out[rel] = dir_modes ? "dir " + mode : "dir";
        else
            out[rel] = "file " + mode + " " + read(it->path());
    }
    return out;
}

CacheRecord record(std::vector<std::string> outputs, std::string terminal = "done\n")
{
    return CacheRecord{"app:build", std::move(outputs), std::move(terminal), std::chrono::milliseconds(1234),
                       "0.1.0-test"};
}

CacheHit must_find(const LocalCache& cache, const Hash128& h)
{
    std::string why;
    auto r = cache.find(h, &why);
    REQUIRE(r);
    if (!r->has_value())
        FAIL("miss: " << why);
    return std::move(**r);
}

// A pid that belonged to a process that has exited.
pid_t dead_pid()
{
    pid_t pid = ::fork();
    if (pid == 0)
        ::_exit(0);
    ::waitpid(pid, nullptr, 0);
    return pid;
}

}  // namespace

TEST_CASE("store then restore gives back contents, modes, links and empty directories", "[key][cache]")
{
    Sandbox sb;
    sb.write("packages/app/dist/main.js", "console.log(1)\n");
    sb.write("packages/app/dist/bin/run", "#!/bin/sh\n", fs::perms(0755));
    sb.write("packages/app/dist/private.key", std::string("\0\x01\xff secret", 10), fs::perms(0600));
    fs::create_symlink("main.js", sb.root / "packages/app/dist/alias.js");
    fs::create_directories(sb.root / "packages/app/dist/empty");
    fs::permissions(sb.root / "packages/app/dist/empty", fs::perms(0700));
    const auto before = snapshot(sb.root / "packages/app/dist");
    const Hash128 h = hash_bytes("key-1");
    const std::string terminal = "\x1b[32mbuilt\x1b[0m \"app\"\r\n";

    LocalCache cache = sb.cache();
    CHECK(read(sb.root / ".qk/.gitignore") == "*\n");
    REQUIRE(cache.store(h, record({"packages/app/dist"}, terminal)));
    CHECK(fs::is_regular_file(sb.root / ".qk/cache" / h.hex() / "meta.json"));
    CHECK(read(sb.root / ".qk/cache" / h.hex() / "terminal.log") == terminal);
    CHECK(fs::is_symlink(sb.root / ".qk/cache" / h.hex() / "files/packages/app/dist/alias.js"));
    CHECK(fs::is_empty(sb.root / ".qk/cache/tmp"));

    fs::remove_all(sb.root / "packages/app/dist");
    CacheHit hit = must_find(cache, h);
    CHECK(hit.task == "app:build");
    CHECK(hit.outputs == std::vector<std::string>{"packages/app/dist"});
    CHECK(hit.terminal_output == terminal);
    CHECK(hit.duration == std::chrono::milliseconds(1234));
    CHECK(hit.qk_version == "0.1.0-test");
    CHECK(hit.files.size() == 5);

    const auto start = fs::file_time_type::clock::now() - std::chrono::seconds(2);
    REQUIRE(cache.restore(hit));
    CHECK(snapshot(sb.root / "packages/app/dist") == before);
    // Fresh copies with fresh times, never links into the cache: editing one leaves the cache as it was.
    fs::path restored = sb.root / "packages/app/dist/main.js";
    CHECK(fs::last_write_time(restored) >= start);
    CHECK(fs::hard_link_count(restored) == 1);
    std::ofstream(restored, std::ios::app) << "edited";
    CHECK(read(sb.root / ".qk/cache" / h.hex() / "files/packages/app/dist/main.js") == "console.log(1)\n");
    // Restoring twice in a row is the same as once.
    REQUIRE(cache.restore(must_find(cache, h)));
    CHECK(snapshot(sb.root / "packages/app/dist") == before);
}

TEST_CASE("restore replaces a directory output whole but keeps what a negation excludes", "[key][cache]")
{
    Sandbox sb;
    sb.write("packages/app/dist/a.js", "a");
    sb.write("packages/app/dist/cache/keep.bin", "tool state");
    const Hash128 h = hash_bytes("key-dir");
    LocalCache cache = sb.cache();
    REQUIRE(cache.store(h, record({"packages/app/dist", "!packages/app/dist/cache"})));
    CacheHit hit = must_find(cache, h);
    CHECK(hit.files.size() == 1);

    sb.write("packages/app/dist/a.js", "changed");
    sb.write("packages/app/dist/stale.js", "stale");
    sb.write("packages/app/dist/old/deep/x.js", "stale");
    sb.write("packages/app/dist/cache/keep.bin", "newer tool state");
    REQUIRE(cache.restore(hit));
    CHECK(snapshot(sb.root / "packages/app/dist", false) ==
          std::map<std::string, std::string>{
              {"a.js", "file 420 a"}, {"cache", "dir"}, {"cache/keep.bin", "file 420 newer tool state"}});
}

TEST_CASE("a glob output restores the files it matches and removes stale matches only", "[key][cache]")
{
    Sandbox sb;
    sb.write("dist/app/main.js", "main");
    sb.write("dist/app/sub/b.js", "b");
    sb.write("dist/app/style.css", "css");
    sb.write("dist/app/vendor/v.js", "v");
    const Hash128 h = hash_bytes("key-glob");
    LocalCache cache = sb.cache();
    REQUIRE(cache.store(h, record({"dist/app/**/*.js", "!dist/app/vendor/**"})));
    CacheHit hit = must_find(cache, h);
    CHECK(hit.files.size() == 2);

    fs::remove(sb.root / "dist/app/sub/b.js");
    sb.write("dist/app/main.js", "changed");
    sb.write("dist/app/stale.js", "stale");
    sb.write("dist/app/style.css", "css changed");
    sb.write("dist/app/vendor/v.js", "v changed");
    REQUIRE(cache.restore(hit));
    CHECK(snapshot(sb.root / "dist/app", false) ==
          std::map<std::string, std::string>{{"main.js", "file 420 main"},
                                             {"style.css", "file 420 css changed"},
                                             {"sub", "dir"},
                                             {"sub/b.js", "file 420 b"},
                                             {"vendor", "dir"},
                                             {"vendor/v.js", "file 420 v changed"}});
}

TEST_CASE("restore never writes through a symbolic link on the way to an output", "[key][cache]")
{
    Sandbox sb;
    sb.write("packages/app/dist/a.js", "a");
    const Hash128 h = hash_bytes("key-link");
    LocalCache cache = sb.cache();
    REQUIRE(cache.store(h, record({"packages/app/dist"})));
    CacheHit hit = must_find(cache, h);

    sb.write(sb.dir / "outside/app/dist/a.js", "outside");
    fs::remove_all(sb.root / "packages/app");
    fs::create_directory_symlink(sb.dir / "outside/app", sb.root / "packages/app");
    Status s = cache.restore(hit);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("app:build") && Catch::Contains("packages/app is a symbolic link"));
    CHECK(
        snapshot(sb.dir / "outside", false) ==
        std::map<std::string, std::string>{{"app", "dir"}, {"app/dist", "dir"}, {"app/dist/a.js", "file 420 outside"}});
}

TEST_CASE("restore removes links inside an output without following them", "[key][cache]")
{
    Sandbox sb;
    sb.write("dist/a.js", "a");
    fs::create_symlink("a.js", sb.root / "dist/to-a");
    const Hash128 h = hash_bytes("key-inner-link");
    LocalCache cache = sb.cache();
    REQUIRE(cache.store(h, record({"dist"})));
    CacheHit hit = must_find(cache, h);

    // What stands in the workspace now leads outside: removed as links, never followed.
    sb.write(sb.dir / "outside/dir/x.js", "x");
    sb.write(sb.dir / "outside/secret", "s");
    fs::remove(sb.root / "dist/to-a");
    fs::create_symlink(sb.dir / "outside/secret", sb.root / "dist/to-a");
    fs::create_directory_symlink(sb.dir / "outside/dir", sb.root / "dist/sub");
    REQUIRE(cache.restore(hit));
    CHECK(fs::read_symlink(sb.root / "dist/to-a") == "a.js");
    CHECK_FALSE(fs::exists(fs::symlink_status(sb.root / "dist/sub")));
    CHECK(read(sb.dir / "outside/dir/x.js") == "x");
    CHECK(read(sb.dir / "outside/secret") == "s");
}

TEST_CASE("store refuses a link leading out of the workspace or out of its outputs, and keeps nothing",
          "[key][cache]")
{
    Sandbox sb;
    sb.write("dist/a.js", "a");
    sb.write("src/main.js", "m");
    struct Case {
        const char* name;
        std::string target;
        const char* said;
    };
    for (const Case& c : {Case{"absolute", (sb.dir / "outside").string(), "outside the workspace"},
                          Case{"climbing", "../../outside", "outside the workspace"},
                          Case{"into an input", "../src/main.js", "out of its outputs"}}) {
        SECTION(c.name)
        {
            fs::create_symlink(c.target, sb.root / "dist/away");
            const Hash128 h = hash_bytes(std::string("key-away-") + c.name);
            LocalCache cache = sb.cache();
            Status s = cache.store(h, record({"dist"}));
            REQUIRE_FALSE(s);
            CHECK(s.error().kind == qk::ErrorKind::cache_entry_unsafe);
            CHECK_THAT(s.error().message, Catch::Contains("dist/away") && Catch::Contains(c.said));
            CHECK_FALSE(fs::exists(sb.root / ".qk/cache" / h.hex()));
            CHECK(fs::is_empty(sb.root / ".qk/cache/tmp"));
            REQUIRE(cache.refused().size() == 1);
            CHECK(cache.refused()[0].task == "app:build");
            // The workspace keeps the task's outputs as they are.
            CHECK(fs::read_symlink(sb.root / "dist/away") == c.target);
        }
    }
}

TEST_CASE("a file that sets a user or group id is never stored, found or restored with its bit", "[key][cache]")
{
    Sandbox sb;
    sb.write("dist/tool", "#!/bin/sh\n", fs::perms(0755));
    ::chmod((sb.root / "dist/tool").c_str(), 04755);
    LocalCache cache = sb.cache();
    const Hash128 h = hash_bytes("key-setuid");
    Status s = cache.store(h, record({"dist"}));
    REQUIRE_FALSE(s);
    CHECK(s.error().kind == qk::ErrorKind::cache_entry_unsafe);
    CHECK_THAT(s.error().message, Catch::Contains("dist/tool") && Catch::Contains("sets a user id"));
    CHECK_FALSE(fs::exists(sb.root / ".qk/cache" / h.hex()));

    // An entry stored before qk refused them (its meta.json says 4755): a miss that says why, and removed.
    ::chmod((sb.root / "dist/tool").c_str(), 0755);
    const Hash128 old = hash_bytes("key-setuid-old");
    REQUIRE(cache.store(old, record({"dist"})));
    const fs::path meta = sb.root / ".qk/cache" / old.hex() / "meta.json";
    std::string text = read(meta);
    const auto at = text.find("\"mode\": \"0755\"", text.find("\"dist/tool\""));
    REQUIRE(at != std::string::npos);
    text.replace(at, 14, "\"mode\": \"4755\"");
    fs::permissions(meta, fs::perms(0644));
    std::ofstream(meta, std::ios::trunc) << text;
    std::string why;
    auto found = cache.find(old, &why);
    REQUIRE(found);
    CHECK_FALSE(found->has_value());
    CHECK_THAT(why, Catch::Contains("dist/tool") && Catch::Contains("sets a user id"));
    CHECK_FALSE(fs::exists(sb.root / ".qk/cache" / old.hex()));

    // And a hit handed to restore with the bit (plain data, however it came) never sets it.
    const Hash128 again = hash_bytes("key-setuid-again");
    REQUIRE(cache.store(again, record({"dist"})));
    CacheHit hit = must_find(cache, again);
    for (CachedFile& f : hit.files)
        if (f.path == "dist/tool")
            f.mode = 06755;
    REQUIRE(cache.restore(hit));
    struct stat st;
    REQUIRE(::lstat((sb.root / "dist/tool").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0755);
}

TEST_CASE("an interrupted store is never a hit, and dead builds are removed on open", "[key][cache]")
{
    Sandbox sb;
    const Hash128 h = hash_bytes("key-interrupted");
    const Hash128 other = hash_bytes("key-no-meta");
    LocalCache cache = sb.cache();
    // A build directory left by a killed process holds a whole entry, but it is not one until renamed.
    fs::path dead = sb.root / ".qk/cache/tmp" / (h.hex() + "." + std::to_string(dead_pid()) + ".0");
    fs::path live = sb.root / ".qk/cache/tmp" / (h.hex() + ".1.0");  // pid 1 is always alive
    sb.write(dead / "meta.json", "{}");
    fs::create_directories(live);
    sb.write(sb.root / ".qk/cache/file-hashes", "another helper's file");
    std::string why;
    auto r = cache.find(h, &why);
    REQUIRE(r);
    CHECK_FALSE(r->has_value());
    CHECK(why.empty());

    // An entry without meta.json: a miss that says why, and removed.
    sb.write(sb.root / ".qk/cache" / other.hex() / "terminal.log", "out");
    sb.write(sb.root / ".qk/cache" / other.hex() / "files/dist/a.js", "a");
    r = cache.find(other, &why);
    REQUIRE(r);
    CHECK_FALSE(r->has_value());
    CHECK_THAT(why, Catch::Contains("meta.json is missing"));
    CHECK_FALSE(fs::exists(sb.root / ".qk/cache" / other.hex()));

    LocalCache reopened = sb.cache();
    CHECK_FALSE(fs::exists(dead));
    CHECK(fs::exists(live));
    CHECK(read(sb.root / ".qk/cache/file-hashes") == "another helper's file");
}

TEST_CASE("a store killed at any moment leaves no entry or a whole one", "[key][cache]")
{
    Sandbox sb;
    for (int i = 0; i < 200; ++i)
        sb.write("dist/f" + std::to_string(i) + ".js", std::string(4096, static_cast<char>('a' + i % 26)));
    const auto outputs = snapshot(sb.root / "dist");
    for (int round = 0; round < 8; ++round) {
        const Hash128 h = hash_bytes("key-killed-" + std::to_string(round));
        int ready[2];
        REQUIRE(::pipe(ready) == 0);
        pid_t child = ::fork();
        if (child == 0) {
            auto cache = LocalCache::open(sb.root);
            char c = 'x';
            (void)!::write(ready[1], &c, 1);
            ::_exit(cache && cache->store(h, record({"dist"})) ? 0 : 1);
        }
        ::close(ready[1]);
        char c;
        REQUIRE(::read(ready[0], &c, 1) == 1);
        ::close(ready[0]);
        // Later rounds let the store get further before the kill: the outcome must hold at every point.
        for (int spin = 0; spin < round * 20000; ++spin)
            (void)::getppid();
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);

        LocalCache cache = sb.cache();  // removes the dead child's build directory
        CHECK(fs::is_empty(sb.root / ".qk/cache/tmp"));
        std::string why;
        auto r = cache.find(h, &why);
        REQUIRE(r);
        CHECK(why.empty());
        if (r->has_value()) {
            CHECK((*r)->files.size() == 200);
            fs::remove_all(sb.root / "dist");
            REQUIRE(cache.restore(**r));
            CHECK(snapshot(sb.root / "dist") == outputs);
        }
    }
}

TEST_CASE("a corrupt entry is a miss with a reason, and is removed", "[key][cache]")
{
    Sandbox sb;
    sb.write("dist/a.js", "aaaa");
    sb.write("dist/b.js", "b");
    LocalCache cache = sb.cache();
    struct Damage {
        const char* name;
        std::function<void(const fs::path&)> apply;
        const char* reason;
    };
    std::vector<Damage> damages = {
        {"bad JSON", [](const fs::path& e) { std::ofstream(e / "meta.json") << "{\"schemaVersion\": 1,"; },
         "meta.json:1:"},
        {"a listed file missing", [](const fs::path& e) { fs::remove(e / "files/dist/b.js"); },
         "files/dist/b.js is listed in meta.json but missing"},
        {"a truncated file", [](const fs::path& e) { std::ofstream(e / "files/dist/a.js") << "a"; },
         "files/dist/a.js has 1 bytes, meta.json says 4"},
        {"truncated terminal output", [](const fs::path& e) { std::ofstream(e / "terminal.log") << ""; },
         "terminal.log has 0 bytes"},
        {"a file outside the outputs",
         [](const fs::path& e) {
             std::string meta = read(e / "meta.json");
             meta.replace(meta.find("dist/b.js"), 9, "../b.js");
             std::ofstream(e / "meta.json") << meta;
         },
         "it lists ../b.js, which its outputs do not name"},
    };
    for (std::size_t i = 0; i < damages.size(); ++i) {
        INFO(damages[i].name);
        const Hash128 h = hash_bytes("key-corrupt-" + std::to_string(i));
        REQUIRE(cache.store(h, record({"dist"})));
        fs::path entry = sb.root / ".qk/cache" / h.hex();
        damages[i].apply(entry);
        std::string why;
        auto r = cache.find(h, &why);
        REQUIRE(r);
        CHECK_FALSE(r->has_value());
        CHECK_THAT(why, Catch::Contains(damages[i].reason));
        CHECK_FALSE(fs::exists(entry));
        CHECK(fs::is_empty(sb.root / ".qk/cache/tmp"));
    }
}

TEST_CASE("two stores of one hash leave one good entry, the first", "[key][cache]")
{
    Sandbox sb;
    sb.write("dist/a.js", "a");
    LocalCache cache = sb.cache();
    const Hash128 first = hash_bytes("key-first");
    REQUIRE(cache.store(first, record({"dist"}, "first\n")));
    REQUIRE(cache.store(first, record({"dist"}, "second\n")));
    CHECK(must_find(cache, first).terminal_output == "first\n");

    for (int round = 0; round < 20; ++round) {
        const Hash128 h = hash_bytes("key-race-" + std::to_string(round));
        Status s1, s2;
        std::thread t1([&] { s1 = cache.store(h, record({"dist"}, "one\n")); });
        std::thread t2([&] { s2 = cache.store(h, record({"dist"}, "two\n")); });
        t1.join();
        t2.join();
        REQUIRE(s1);
        REQUIRE(s2);
        CacheHit hit = must_find(cache, h);
        CHECK((hit.terminal_output == "one\n" || hit.terminal_output == "two\n"));
        CHECK(hit.files.size() == 1);
    }
    CHECK(fs::is_empty(sb.root / ".qk/cache/tmp"));
}

TEST_CASE("outputs outside the workspace are refused by store and restore", "[key][cache]")
{
    Sandbox sb;
    sb.write(sb.dir / "outside/a.js", "outside");
    LocalCache cache = sb.cache();
    for (std::string bad : {"../outside", "/tmp", "dist/../../outside"}) {
        INFO(bad);
        Status s = cache.store(hash_bytes(bad), record({bad}));
        REQUIRE_FALSE(s);
        CHECK_THAT(s.error().message, Catch::Contains("cannot cache app:build") && Catch::Contains(bad));
        CacheHit forged{hash_bytes(bad), "app:build", {bad}};
        CHECK_FALSE(cache.restore(forged));
    }
    // A hit whose list names a path its outputs do not (a forged or damaged one) writes nothing.
    sb.write("dist/a.js", "a");
    const Hash128 h = hash_bytes("key-forged");
    REQUIRE(cache.store(h, record({"dist"})));
    CacheHit hit = must_find(cache, h);
    hit.files.push_back(CachedFile{"../outside/a.js", OutputFile::Kind::file, 0644, 1});
    CHECK_FALSE(cache.restore(hit));
    CHECK(read(sb.dir / "outside/a.js") == "outside");
    CHECK(fs::directory_iterator(sb.dir / "outside") != fs::directory_iterator());
    CHECK(std::distance(fs::directory_iterator(sb.dir), fs::directory_iterator()) == 2);  // ws and outside
}

// Not a timed test: `qk_unit_tests "[cache-bench]"` prints what store and restore cost (docs/benchmarks.md).
TEST_CASE("cache store and restore figures", "[.cache-bench]")
{
    using clock = std::chrono::steady_clock;
    Sandbox sb;
    for (int i = 0; i < 1000; ++i)
        sb.write("small/d" + std::to_string(i / 50) + "/f" + std::to_string(i) + ".js", std::string(1024, 'x'));
    sb.write("big/blob.bin", std::string(100 << 20, 'b'));
    LocalCache cache = sb.cache();
    for (const char* output : {"small", "big"}) {
        double best_store = 1e9, best_restore = 1e9;
        for (int rep = 0; rep < 5; ++rep) {
            const Hash128 h = hash_bytes(std::string(output) + std::to_string(rep));
            auto t0 = clock::now();
            REQUIRE(cache.store(h, record({output})));
            auto t1 = clock::now();
            CacheHit hit = must_find(cache, h);
            auto t2 = clock::now();
            REQUIRE(cache.restore(hit));
            auto t3 = clock::now();
            best_store = std::min(best_store, std::chrono::duration<double, std::milli>(t1 - t0).count());
            best_restore = std::min(best_restore, std::chrono::duration<double, std::milli>(t3 - t2).count());
        }
        WARN(output << ": store " << best_store << " ms, restore " << best_restore << " ms (best of 5)");
    }
}

TEST_CASE("a cached copy changed since it was stored is never restored: the entry is removed", "[key][cache]")
{
    Sandbox sb;
    sb.write("dist/app.js", "good output\n");
    const Hash128 h = hash_bytes("key-tampered");
    LocalCache cache = sb.cache();
    REQUIRE(cache.store(h, record({"dist"})));
    // Same size, one byte changed: only the content hash tells.
    sb.write(sb.root / ".qk/cache" / h.hex() / "files/dist/app.js", "evil output\n");
    CacheHit hit = must_find(cache, h);
    // A good copy in the workspace stays in place: the check is against the stored hash, not the copy.
    CHECK(outputs_in_place(cache, hit));
    fs::remove(sb.root / "dist/app.js");
    sb.write("dist/other.js", "kept\n");
    Status restored = cache.restore(hit);
    REQUIRE_FALSE(restored);
    CHECK(restored.error().message.find("the cached copy of dist/app.js changed since it was stored, so the entry "
                                        "was removed") != std::string::npos);
    CHECK(read(sb.root / "dist/other.js") == "kept\n");  // nothing in the workspace was touched
    CHECK_FALSE(fs::exists(sb.root / "dist/app.js"));
    auto again = cache.find(h);
    REQUIRE(again);
    CHECK_FALSE(*again);
}

TEST_CASE("an entry without content hashes (an older qk's) is a miss that says why", "[key][cache]")
{
    Sandbox sb;
    sb.write("dist/app.js", "x\n");
    const Hash128 h = hash_bytes("key-old");
    LocalCache cache = sb.cache();
    REQUIRE(cache.store(h, record({"dist"})));
    fs::path meta = sb.root / ".qk/cache" / h.hex() / "meta.json";
    std::string text = read(meta);
    auto at = text.find(", \"hash\": \"");
    REQUIRE(at != std::string::npos);
    text.erase(at, 11 + 32 + 1);
    sb.write(meta, text);
    std::string why;
    auto hit = cache.find(h, &why);
    REQUIRE(hit);
    CHECK_FALSE(*hit);
    CHECK(why.find("has no content hash (stored by an older qk)") != std::string::npos);
}

TEST_CASE("outputs over the entry limit are not stored and stay; a sparse file counts what it takes", "[key][cache]")
{
    Sandbox sb;
    sb.write("dist/dense.bin", std::string(3 << 20, 'd'));
    LocalCache cache = sb.cache();
    cache.limit_entry(std::uint64_t{1} << 20);
    const Hash128 h = hash_bytes("key-too-big");
    Status s = cache.store(h, record({"dist"}));
    REQUIRE_FALSE(s);
    CHECK(s.error().kind == qk::ErrorKind::cache_entry_too_big);
    CHECK_THAT(s.error().message, Catch::Contains("over the 1 MiB one cache entry may take") &&
                                      Catch::Contains("QK_CACHE_MAX_ENTRY_SIZE=1GiB"));
    CHECK_FALSE(fs::exists(sb.root / ".qk/cache" / h.hex()));
    CHECK(fs::is_empty(sb.root / ".qk/cache/tmp"));
    CHECK(fs::file_size(sb.root / "dist/dense.bin") == 3u << 20);
    REQUIRE(cache.refused().size() == 1);

    // 1 GiB long, 4 KiB of data: under the same limit, stored and restored sparse.
    fs::remove(sb.root / "dist/dense.bin");
    {
        std::ofstream(sb.root / "dist/sparse.bin") << "";
    }
    fs::resize_file(sb.root / "dist/sparse.bin", std::uint64_t{1} << 30);
    {
        std::fstream f(sb.root / "dist/sparse.bin", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(5000000);
        f << std::string(4096, 's');
    }
    struct stat st;
    REQUIRE(::stat((sb.root / "dist/sparse.bin").c_str(), &st) == 0);
    if (st.st_blocks * 512 >= (1 << 20)) {
        qk::test::skip("this file system does not keep holes");
        return;
    }
    const Hash128 sparse = hash_bytes("key-sparse");
    REQUIRE(cache.store(sparse, record({"dist"})));
    REQUIRE(::stat((sb.root / ".qk/cache" / sparse.hex() / "files/dist/sparse.bin").c_str(), &st) == 0);
    CHECK(st.st_size == std::int64_t{1} << 30);
    CHECK(st.st_blocks * 512 < (1 << 20));
    CacheHit hit = must_find(cache, sparse);
    fs::remove(sb.root / "dist/sparse.bin");
    REQUIRE(cache.restore(hit));
    REQUIRE(::stat((sb.root / "dist/sparse.bin").c_str(), &st) == 0);
    CHECK(st.st_size == std::int64_t{1} << 30);
    CHECK(st.st_blocks * 512 < (1 << 20));
}
