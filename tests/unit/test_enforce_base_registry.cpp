// BaseRegistry: bases recorded and forgotten, live runs' covers, and when a base is safe to use.
#include "qk/enforce/base_registry.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "test_support.hpp"

using namespace qk;
using namespace qk::test;
using enforce::BaseRegistry;
namespace fs = std::filesystem;

namespace {

struct Setup {
    TempDir dir{"qk-base-registry"};
    fs::path home = dir.path / "registry";
    fs::path base(const std::string& name) const
    {
        fs::create_directories(dir.path / name);
        return fs::canonical(dir.path / name);
    }
    BaseRegistry open() const
    {
        auto r = BaseRegistry::open(home);
        INFO((r.ok() ? std::string() : r.error().message));
        REQUIRE(r.ok());
        return std::move(r).value();
    }
};

bool covered(const BaseRegistry& r, const fs::path& base, bool capable_only = false)
{
    auto c = r.covered_by_live_runs(base.native(), capable_only);
    REQUIRE(c.ok());
    return *c;
}

}  // namespace

TEST_CASE("bases are recorded once and forgotten when gone", "[enforce]")
{
    Setup s;
    auto r = s.open();
    const fs::path a = s.base("a"), b = s.base("b");
    REQUIRE(r.add(a).ok());
    REQUIRE(r.add(a).ok());
    REQUIRE(r.add(b).ok());
    auto listed = r.bases();
    REQUIRE(listed.ok());
    std::sort(listed->begin(), listed->end());
    CHECK(*listed == std::vector<std::string>{a.native(), b.native()});
    fs::remove(b);
    CHECK(*r.bases() == std::vector<std::string>{a.native()});
    fs::create_directory(b);  // made again: not listed until a run adds it again
    CHECK(*r.bases() == std::vector<std::string>{a.native()});
}

TEST_CASE("a base is safe only when every other live run has published a cover of it", "[enforce]")
{
    Setup s;
    const fs::path a = s.base("a"), b = s.base("b");
    auto me = s.open();
    CHECK(covered(me, a));  // nobody else lives
    {
        auto other = s.open();
        CHECK_FALSE(covered(me, a));  // live, but has not said what it covers yet
        REQUIRE(other.publish({a.native()}, false).ok());
        CHECK(covered(me, a));
        CHECK_FALSE(covered(me, b));
    }
    CHECK(covered(me, b));  // the other run has ended
}

TEST_CASE("a cover is of the directory, not of its name", "[enforce]")
{
    // A task moves the covered directory away and makes a fresh one where its name was: the live run's
    // cover stays on the old one, so the new one is not safe.
    Setup s;
    const fs::path a = s.base("a");
    auto me = s.open();
    auto other = s.open();
    REQUIRE(other.publish({a.native()}, false).ok());
    fs::rename(a, s.dir.path / "moved");
    fs::create_directory(a);
    CHECK_FALSE(covered(me, a));
}

TEST_CASE("a killed run's mark is not live and is cleared", "[enforce]")
{
    Setup s;
    const fs::path a = s.base("a");
    auto me = s.open();
    // A mark as a killed run leaves it: named, its lock held by nobody, no covers.
    std::ofstream(s.home / "live" / "live-killed") << "";
    CHECK(covered(me, a));
    CHECK_FALSE(fs::exists(s.home / "live" / "live-killed"));
}

TEST_CASE("a registry directory another user could write in is refused", "[enforce]")
{
    Setup s;
    fs::create_directories(s.home);
    ::chmod(s.home.c_str(), 0777);
    auto r = BaseRegistry::open(s.home);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("others may write in it"));
    CHECK_THAT(r.error().message, Catch::Contains(s.home.string()));
}

TEST_CASE("the mark goes when the run ends", "[enforce]")
{
    Setup s;
    {
        auto me = s.open();
        REQUIRE(me.publish({}, false).ok());
        CHECK(std::distance(fs::directory_iterator(s.home / "live"), fs::directory_iterator()) == 2);
    }
    CHECK(fs::is_empty(s.home / "live"));
}

TEST_CASE("a hidden run directory is kept from runs whose commands keep capabilities", "[enforce]")
{
    // As root a run directory is out of reach of every command but one that kept root's capabilities
    // over the host (Landlock alone, no user namespace): only such runs must cover it.
    Setup s;
    const fs::path a = s.base("a");
    auto me = s.open();
    auto plain = s.open();
    REQUIRE(plain.publish({}, false).ok());
    CHECK(covered(me, a, true));
    CHECK_FALSE(covered(me, a, false));
    auto capable = s.open();
    REQUIRE(capable.publish({}, true).ok());
    CHECK_FALSE(covered(me, a, true));
    REQUIRE(capable.publish({a.native()}, true).ok());
    CHECK(covered(me, a, true));
}
