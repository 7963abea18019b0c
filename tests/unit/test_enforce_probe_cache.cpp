// ProbeCache: a verdict where every step passed is kept and read back for the same environment, and
// never for another helper, another key under the same name, after forget(), or under a seccomp filter.
#include "qk/enforce/probe_cache.hpp"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test_support.hpp"

namespace fs = std::filesystem;
using qk::enforce::ProbeCache;
using qk::enforce::ProbeReport;
using qk::test::skip;
using qk::test::TempDir;

namespace {

// A registry home, a workspace and a helper file, each fresh.
struct Setup {
    TempDir dir{"qk-probe-cache"};
    fs::path home = dir.path / "home", root = dir.path / "ws", helper = dir.path / "qk-sandbox-exec";
    Setup()
    {
        fs::create_directories(home);
        fs::create_directories(root);
        std::ofstream(helper) << "helper\n";
    }
    // False (and the case skipped) where this process runs under a seccomp filter: nothing is kept there.
    bool usable() const
    {
        if (ProbeCache::here(home, helper.string(), root.string(), home.string()))
            return true;
        skip("a seccomp filter is in force on the tests (a container's profile): ProbeCache keeps nothing here");
        return false;
    }
    ProbeCache cache() const
    {
        auto c = ProbeCache::here(home, helper.string(), root.string(), home.string());
        REQUIRE(c.has_value());
        return *c;
    }
};

ProbeReport passed()
{
    ProbeReport r;
    r.landlock_abi = 6;
    for (const char* stage : {"landlock", "userns", "uid_map", "mount-private", "overlay", "overlay-workspace",
                              "read-mask", "mirror"})
        r.steps.push_back({stage, true, 0, ""});
    return r;
}

}  // namespace

TEST_CASE("a verdict where every step passed is read back for the same environment", "[enforce]")
{
    Setup s;
    if (!s.usable())
        return;
    CHECK_FALSE(s.cache().load().has_value());
    s.cache().store(passed());
    auto again = s.cache().load();
    REQUIRE(again.has_value());
    CHECK(*again == passed());
    CHECK(s.cache().key().find("boot ") == 0);
    CHECK(s.cache().key().find("\nmounts ") != std::string::npos);
}

TEST_CASE("a verdict with a failed step is not kept: each run probes and says why", "[enforce]")
{
    Setup s;
    if (!s.usable())
        return;
    ProbeReport failed = passed();
    failed.steps[4] = {"overlay", false, 1, "mount: Operation not permitted"};
    s.cache().store(failed);
    CHECK_FALSE(s.cache().load().has_value());
    ProbeReport no_landlock = passed();
    no_landlock.landlock_abi = 0;
    s.cache().store(no_landlock);
    CHECK_FALSE(s.cache().load().has_value());
}

TEST_CASE("another helper, another key under the same name, and forget() all probe again", "[enforce]")
{
    Setup s;
    if (!s.usable())
        return;
    s.cache().store(passed());
    REQUIRE(s.cache().load().has_value());

    // The file holds another key (a hash collision, a file cut short): not this environment's verdict.
    const fs::path file = s.cache().file();
    std::string text;
    {
        std::ifstream in(file);
        text.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::ofstream(file) << "boot another\n" << text.substr(text.find("--\n"));
    CHECK_FALSE(s.cache().load().has_value());

    s.cache().store(passed());
    REQUIRE(s.cache().load().has_value());
    s.cache().forget();
    CHECK_FALSE(s.cache().load().has_value());

    // A rebuilt helper is another file: its own verdict.
    s.cache().store(passed());
    const std::string before = s.cache().key();
    fs::remove(s.helper);
    std::ofstream(s.helper) << "rebuilt helper\n";
    CHECK(s.cache().key() != before);
    CHECK_FALSE(s.cache().load().has_value());
    // Each environment's verdict in a file of its own: the old helper's is still there.
    CHECK(fs::exists(file));
    CHECK(s.cache().file() != file);
}

TEST_CASE("under a seccomp filter nothing is kept: two filters read alike in /proc", "[enforce]")
{
    Setup s;
    if (!s.usable())
        return;
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // A filter that allows everything still makes the process one whose filter qk cannot read.
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = {1, &allow};
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
            ::_exit(2);
        ::_exit(ProbeCache::here(s.home, s.helper.string(), s.root.string(), s.home.string()) ? 1 : 0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(ProbeCache::here(s.home, s.helper.string(), s.root.string(), s.home.string()).has_value());
}
