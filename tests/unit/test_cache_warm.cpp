// Warm state in the local cache: kept with an entry apart from its outputs, put back only where the
// workspace holds none, only under the warm paths declared now, never through a symbolic link, checked
// against its hashes first; an archive for a shared cache carries none of it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache_workspace.hpp"
#include "qk/key/cache.hpp"

namespace fs = std::filesystem;
using namespace qk::key;
using qk::test::read;

namespace {

struct Workspace : qk::test::CacheWorkspace {
    Workspace() : CacheWorkspace("qk-warm") {}
};

const std::vector<std::string> kOutputs{"packages/app/dist"};
const std::vector<std::string> kWarm{"packages/app/.eslintcache"};

CacheRecord record(std::vector<std::string> warm = kWarm, std::string task = "app:lint")
{
    CacheRecord r{std::move(task), kOutputs, "linted\n", std::chrono::milliseconds(5), "0.1.0-test"};
    r.warm = std::move(warm);
    return r;
}

OutputSet compiled(const std::vector<std::string>& patterns)
{
    auto set = OutputSet::compile(patterns);
    REQUIRE(set);
    return std::move(*set);
}

// The warm state of `hash` put in place for app:lint under kWarm, as a run would.
WarmRestored must_restore(const LocalCache& cache, const Hash128& hash, const std::vector<std::string>& warm = kWarm)
{
    auto r = cache.restore_warm(hash, "app:lint", compiled(warm), compiled(kOutputs));
    if (!r)
        FAIL(r.error().message);
    REQUIRE(r->has_value());
    return std::move(**r);
}

// Where most cases start: app:lint stored once, its warm state holding a directory, so that a restore
// has more than one level to make.
struct StoredLint {
    Workspace ws;
    LocalCache cache = ws.cache();
    const Hash128 h = hash_bytes("lint-1");

    StoredLint()
    {
        ws.write("packages/app/dist/report.txt", "0 problems\n");
        ws.write("packages/app/.eslintcache/cache.json", "{\"src/a.ts\": \"ok\"}");
        ws.write("packages/app/.eslintcache/nested/more.json", "{}");
        std::string note;
        REQUIRE(cache.store(h, record(), &note));
        CHECK(note.empty());
    }
};

}  // namespace

TEST_CASE_METHOD(StoredLint, "warm state is kept with the entry, apart from its outputs, and names the task's newest",
                 "[key][cache]")
{
    std::string why;
    auto hit = cache.find(h, &why);
    REQUIRE(hit);
    REQUIRE(hit->has_value());
    // The outputs are what they are without warm paths: warm state is no output.
    CHECK((*hit)->files.size() == 1);
    CHECK((*hit)->files[0].path == "packages/app/dist/report.txt");
    CHECK(read(cache.dir() / h.hex() / "meta.json").find(".eslintcache") == std::string::npos);
    CHECK(read(cache.dir() / h.hex() / "warm/packages/app/.eslintcache/cache.json") == "{\"src/a.ts\": \"ok\"}");
    CHECK(cache.last_warm("app:lint") == h);
    CHECK_FALSE(cache.last_warm("lib:lint"));

    // A later store of the task names its entry instead; the earlier one keeps its own warm state.
    ws.write("packages/app/.eslintcache/cache.json", "{\"src/a.ts\": \"ok\", \"src/b.ts\": \"ok\"}");
    const Hash128 h2 = hash_bytes("lint-2");
    REQUIRE(cache.store(h2, record()));
    CHECK(cache.last_warm("app:lint") == h2);
    CHECK(read(cache.dir() / h.hex() / "warm/packages/app/.eslintcache/cache.json") == "{\"src/a.ts\": \"ok\"}");
}

TEST_CASE("a task without warm paths keeps no warm state and names no entry", "[key][cache]")
{
    Workspace ws;
    LocalCache cache = ws.cache();
    ws.write("packages/app/dist/report.txt", "0 problems\n");
    ws.write("packages/app/.eslintcache/cache.json", "{}");
    const Hash128 h = hash_bytes("plain");
    REQUIRE(cache.store(h, record({})));
    CHECK_FALSE(fs::exists(cache.dir() / h.hex() / "warm"));
    CHECK_FALSE(fs::exists(cache.dir() / h.hex() / "warm.json"));
    CHECK_FALSE(fs::exists(cache.dir() / "warm"));
    CHECK_FALSE(cache.last_warm("app:lint"));
    auto r = cache.restore_warm(h, "app:lint", compiled(kWarm), compiled(kOutputs));
    REQUIRE(r);
    CHECK_FALSE(r->has_value());
}

TEST_CASE_METHOD(StoredLint, "warm state is put in place where the workspace has none, and the workspace's is kept",
                 "[key][cache]")
{
    SECTION("absent: a fresh checkout gets the stored state")
    {
        fs::remove_all(ws.root / "packages/app/.eslintcache");
        WarmRestored r = must_restore(cache, h);
        CHECK(r.restored == std::vector<std::string>{"packages/app/.eslintcache"});
        CHECK(r.kept.empty());
        CHECK(r.files == 2);
        CHECK(read(ws.root / "packages/app/.eslintcache/cache.json") == "{\"src/a.ts\": \"ok\"}");
        CHECK(read(ws.root / "packages/app/.eslintcache/nested/more.json") == "{}");
        // A copy, not a link into the cache: the tool rewriting it leaves the entry as it was.
        CHECK(fs::hard_link_count(ws.root / "packages/app/.eslintcache/cache.json") == 1);
    }
    SECTION("present: the workspace's is newer and stays whole")
    {
        fs::remove_all(ws.root / "packages/app/.eslintcache");
        ws.write("packages/app/.eslintcache/cache.json", "newer");
        WarmRestored r = must_restore(cache, h);
        CHECK(r.restored.empty());
        CHECK(r.kept == std::vector<std::string>{"packages/app/.eslintcache"});
        CHECK(r.files == 0);
        CHECK(read(ws.root / "packages/app/.eslintcache/cache.json") == "newer");
        CHECK_FALSE(fs::exists(ws.root / "packages/app/.eslintcache/nested"));
    }
}

TEST_CASE("a glob warm path whose directory stands with nothing matched is absent", "[key][cache]")
{
    Workspace ws;
    LocalCache cache = ws.cache();
    const std::vector<std::string> warm{"packages/app/.cache/**/*.json"};
    ws.write("packages/app/dist/report.txt", "x");
    ws.write("packages/app/.cache/a/timings.json", "[1]");
    ws.write("packages/app/.cache/readme.txt", "not warm state");
    const Hash128 h = hash_bytes("glob");
    REQUIRE(cache.store(h, record(warm)));
    CHECK_FALSE(fs::exists(cache.dir() / h.hex() / "warm/packages/app/.cache/readme.txt"));

    fs::remove(ws.root / "packages/app/.cache/a/timings.json");
    WarmRestored r = must_restore(cache, h, warm);
    CHECK(r.restored == std::vector<std::string>{"packages/app/.cache"});
    CHECK(read(ws.root / "packages/app/.cache/a/timings.json") == "[1]");
    CHECK(read(ws.root / "packages/app/.cache/readme.txt") == "not warm state");
}

TEST_CASE_METHOD(StoredLint, "warm state is never restored through a symbolic link", "[key][cache]")
{
    fs::remove_all(ws.root / "packages/app/.eslintcache");

    SECTION("a link at the warm path")
    {
        fs::create_directory_symlink(ws.dir / "outside", ws.root / "packages/app/.eslintcache");
        WarmRestored r = must_restore(cache, h);
        CHECK(r.links == std::vector<std::string>{"packages/app/.eslintcache"});
        CHECK(r.files == 0);
        CHECK(fs::is_empty(ws.dir / "outside"));
        CHECK(fs::is_symlink(ws.root / "packages/app/.eslintcache"));
    }
    SECTION("a link on the way to it")
    {
        fs::rename(ws.root / "packages/app", ws.dir / "outside/app");
        fs::create_directories(ws.root / "packages");
        fs::create_directory_symlink(ws.dir / "outside/app", ws.root / "packages/app");
        WarmRestored r = must_restore(cache, h);
        CHECK(r.links == std::vector<std::string>{"packages/app/.eslintcache"});
        CHECK_FALSE(fs::exists(ws.dir / "outside/app/.eslintcache"));
    }
}

TEST_CASE_METHOD(StoredLint, "warm state is restored only under the warm paths declared now, and only if intact",
                 "[key][cache]")
{
    fs::remove_all(ws.root / "packages/app/.eslintcache");

    SECTION("a warm path no longer declared")
    {
        auto r = cache.restore_warm(h, "app:lint", compiled({"packages/app/.eslintcache/nested"}), compiled(kOutputs));
        REQUIRE_FALSE(r);
        CHECK_THAT(r.error().message, Catch::Contains("packages/app/.eslintcache/cache.json") &&
                                          Catch::Contains("warm paths do not name"));
    }
    SECTION("a warm path that is an output now")
    {
        auto r = cache.restore_warm(h, "app:lint", compiled(kWarm), compiled({"packages/app/.eslintcache"}));
        REQUIRE_FALSE(r);
        CHECK_THAT(r.error().message, Catch::Contains("an output of the task now"));
    }
    SECTION("a copy changed in the cache")
    {
        std::ofstream(cache.dir() / h.hex() / "warm/packages/app/.eslintcache/nested/more.json") << "{\"evil\": 1}";
        auto r = cache.restore_warm(h, "app:lint", compiled(kWarm), compiled(kOutputs));
        REQUIRE_FALSE(r);
        CHECK_THAT(r.error().message, Catch::Contains("changed since it was stored"));
    }
    SECTION("another task's entry")
    {
        auto r = cache.restore_warm(h, "lib:lint", compiled(kWarm), compiled(kOutputs));
        REQUIRE(r);
        CHECK_FALSE(r->has_value());
    }
    // Nothing was written before the checks passed.
    CHECK_FALSE(fs::exists(ws.root / "packages/app/.eslintcache"));
}

TEST_CASE("an output under a warm path is the result's, never warm state", "[key][cache]")
{
    Workspace ws;
    LocalCache cache = ws.cache();
    ws.write("packages/app/dist/report.txt", "0 problems\n");
    ws.write("packages/app/.eslintcache/cache.json", "{}");
    ws.write("packages/app/.eslintcache/summary.txt", "an output");
    CacheRecord r = record();
    r.outputs = {"packages/app/dist", "packages/app/.eslintcache/summary.txt"};
    const Hash128 h = hash_bytes("overlap");
    REQUIRE(cache.store(h, r));
    CHECK(fs::exists(cache.dir() / h.hex() / "files/packages/app/.eslintcache/summary.txt"));
    CHECK_FALSE(fs::exists(cache.dir() / h.hex() / "warm/packages/app/.eslintcache/summary.txt"));
    CHECK(fs::exists(cache.dir() / h.hex() / "warm/packages/app/.eslintcache/cache.json"));
}

TEST_CASE("warm state is never read through a link: one at the path is kept as a link, one on the way keeps none",
          "[key][cache]")
{
    Workspace ws;
    LocalCache cache = ws.cache();
    ws.write("packages/app/dist/report.txt", "0 problems\n");
    ws.write(ws.dir / "outside/cache.json", "secret");
    fs::create_directories(ws.root / "packages/app");
    fs::create_directory_symlink(ws.dir / "outside", ws.root / "packages/app/.eslintcache");
    const Hash128 h = hash_bytes("linked");
    std::string note;
    REQUIRE(cache.store(h, record(), &note));
    CHECK(note.empty());
    // Kept as the link it is (followed, it would be a directory holding cache.json).
    CHECK(fs::is_symlink(cache.dir() / h.hex() / "warm/packages/app/.eslintcache"));
    CHECK(fs::read_symlink(cache.dir() / h.hex() / "warm/packages/app/.eslintcache") == ws.dir / "outside");

    // A glob's walk meets the link where it starts: nothing is kept, the entry is stored all the same.
    const Hash128 h2 = hash_bytes("linked-2");
    REQUIRE(cache.store(h2, record({"packages/app/.eslintcache/**/*.json"}), &note));
    CHECK_THAT(note, Catch::Contains("its warm state was not kept") && Catch::Contains("symbolic link"));
    CHECK(fs::exists(cache.dir() / h2.hex() / "meta.json"));
    CHECK_FALSE(fs::exists(cache.dir() / h2.hex() / "warm.json"));
    CHECK_FALSE(fs::exists(cache.dir() / h2.hex() / "warm"));
    CHECK(cache.last_warm("app:lint") == h);
}

TEST_CASE_METHOD(StoredLint, "an entry's archive for a shared cache carries no warm state", "[key][cache]")
{
    std::string archive;
    REQUIRE(cache.export_entry(h, [&](std::string_view chunk) {
        archive.append(chunk);
        return qk::Status();
    }));

    Workspace other;
    LocalCache there = other.cache();
    EntryImport import = there.begin_import(h);
    REQUIRE(import.write(archive));
    REQUIRE(import.finish());
    CHECK(fs::is_regular_file(there.dir() / h.hex()));  // kept packed: the archive, which has no place for it
    auto r = there.restore_warm(h, "app:lint", compiled(kWarm), compiled(kOutputs));
    REQUIRE(r);
    CHECK_FALSE(r->has_value());
    CHECK_FALSE(there.last_warm("app:lint"));
}
