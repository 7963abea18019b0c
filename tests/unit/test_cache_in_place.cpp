// outputs_in_place: a hit whose outputs are already on disk byte for byte needs no restore; any
// difference (content, mode, an extra or a missing file, a symlink's target) means it does.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "qk/key/cache_in_place.hpp"

namespace fs = std::filesystem;
using namespace qk::key;

TEST_CASE("cache: outputs already in place are recognised, any difference is not", "[key][cache]")
{
    fs::path root = fs::temp_directory_path() / ("qk-in-place-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "app/dist/sub");
    auto write = [&](const std::string& rel, const std::string& text) {
        std::ofstream(root / rel, std::ios::binary | std::ios::trunc) << text;
    };
    write("app/dist/a.js", "console.log(1);\n");
    write("app/dist/sub/b.js", "b");
    fs::create_symlink("a.js", root / "app/dist/link.js");
    fs::create_directories(root / "app/dist/empty");

    auto cache = LocalCache::open(root);
    REQUIRE(cache.ok());
    Hash128 h = hash_bytes("key");
    REQUIRE(cache->store(h, CacheRecord{"app:build", {"app/dist"}, "built\n", {}, "test"}).ok());
    auto hit = cache->find(h);
    REQUIRE(hit.ok());
    REQUIRE(hit->has_value());
    const CacheHit& entry = **hit;
    CHECK(outputs_in_place(*cache, entry));

    SECTION("same size, other bytes")
    {
        write("app/dist/sub/b.js", "c");
        CHECK_FALSE(outputs_in_place(*cache, entry));
    }
    SECTION("another mode")
    {
        fs::permissions(root / "app/dist/a.js", fs::perms(0755));
        CHECK_FALSE(outputs_in_place(*cache, entry));
    }
    SECTION("an extra file")
    {
        write("app/dist/extra.js", "");
        CHECK_FALSE(outputs_in_place(*cache, entry));
    }
    SECTION("a missing file")
    {
        fs::remove(root / "app/dist/sub/b.js");
        CHECK_FALSE(outputs_in_place(*cache, entry));
    }
    SECTION("a symlink pointing elsewhere")
    {
        fs::remove(root / "app/dist/link.js");
        fs::create_symlink("sub/b.js", root / "app/dist/link.js");
        CHECK_FALSE(outputs_in_place(*cache, entry));
    }
    SECTION("restored, it is in place again")
    {
        write("app/dist/a.js", "tampered");
        REQUIRE(cache->restore(entry).ok());
        CHECK(outputs_in_place(*cache, entry));
    }
    fs::remove_all(root);
}
