// QK_CACHE_MAX_ENTRY_SIZE: a size as people write one, read once by Settings::read; each bad value an
// Error naming the variable, the value and what it takes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "qk/util/settings.hpp"
#include "settings_support.hpp"

using namespace qk;

namespace {

Result<Settings> read(std::map<std::string, std::string> vars)
{
    return test::settings_from(std::move(vars));
}

}  // namespace

TEST_CASE("a byte size takes bytes, binary units in any case, and off", "[util][settings]")
{
    constexpr std::uint64_t KiB = 1024, MiB = KiB << 10, GiB = MiB << 10, TiB = GiB << 10;
    const std::map<std::string, std::uint64_t> good = {
        {"1048576", 1048576}, {"512b", 512},     {"64K", 64 * KiB},  {"64kib", 64 * KiB}, {"64KB", 64 * KiB},
        {"500M", 500 * MiB},  {"500MiB", 500 * MiB}, {"4G", 4 * GiB}, {"4gib", 4 * GiB},  {"4GB", 4 * GiB},
        {"2T", 2 * TiB},      {"off", std::numeric_limits<std::uint64_t>::max()}, {"OFF", std::numeric_limits<std::uint64_t>::max()}};
    for (const auto& [text, bytes] : good) {
        INFO(text);
        auto n = parse_byte_size("QK_X", text);
        REQUIRE(n);
        CHECK(*n == bytes);
    }
    for (const char* bad : {"", "0", "0G", "-1", "+4G", "4 G", "4X", "G", "lots", "4GiBs", "1.5G",
                            "99999999999999999999", "16777216T"}) {
        INFO(bad);
        auto n = parse_byte_size("QK_X", bad);
        REQUIRE_FALSE(n);
        CHECK(n.error().message == std::string("QK_X='") + bad +
                                       "' must be a size such as 4GiB, 500MiB or 1048576 (bytes; K, M, G, T are "
                                       "binary units), or off for no limit");
    }
}

TEST_CASE("QK_CACHE_MAX_ENTRY_SIZE: 4 GiB unless set", "[util][settings]")
{
    auto none = read({});
    REQUIRE(none);
    CHECK(none->cache.max_entry_bytes == std::uint64_t{4} << 30);
    auto set = read({{"QK_CACHE_MAX_ENTRY_SIZE", "64GiB"}});
    REQUIRE(set);
    CHECK(set->cache.max_entry_bytes == std::uint64_t{64} << 30);
    auto bad = read({{"QK_CACHE_MAX_ENTRY_SIZE", "lots"}});
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::StartsWith("QK_CACHE_MAX_ENTRY_SIZE='lots' must be a size"));
}
