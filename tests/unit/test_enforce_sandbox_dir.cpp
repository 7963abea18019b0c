// SandboxDir: where run directories go, their locks, cleaning up after killed runs, removal.
#include "qk/enforce/sandbox_dir.hpp"

#include <signal.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <utility>

#include "enforce/tree_ops.hpp"
#include "enforce_support.hpp"
#include "settings_support.hpp"
#include "test_support.hpp"

using namespace qk;
using namespace qk::test;
using enforce::SandboxDir;

namespace {

struct Setup {
    TempDir dir{"qk-enforce-sandbox"};
    efs::path ws = dir.path / "ws";
    efs::path base = dir.path / "base";
    Setup() { efs::create_directory(ws); }
    SandboxDir::Bases chosen() const { return {base, {}}; }
    SandboxDir create() const
    {
        auto d = SandboxDir::create(ws, chosen());
        INFO((d.ok() ? std::string() : d.error().message));
        REQUIRE(d.ok());
        return std::move(d).value();
    }
};

mode_t mode_of(const efs::path& p)
{
    struct stat st;
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

// A run directory as a killed run leaves it: its lock file, held by nobody, and overlay leftovers.
void leave_killed_run(const efs::path& base, const std::string& name, bool with_lock = true)
{
    put_dir(base / name / "cmd-abcdef/upper/dist");
    put_file(base / name / "cmd-abcdef/upper/dist/app.js", "x");
    put_dir(base / name / "cmd-abcdef/work/work", 0);
    if (with_lock)
        put_file(base / name / "lock", "", 0600);
}

}  // namespace

namespace {

// The names in `dir` starting with `prefix`.
std::vector<std::string> entries_of(const efs::path& dir, std::string_view prefix)
{
    std::vector<std::string> out;
    for (const auto& e : efs::directory_iterator(dir))
        if (e.path().filename().string().starts_with(prefix))
            out.push_back(e.path().filename().string());
    return out;
}

}  // namespace

TEST_CASE("a run directory with its lock, command directories of mode 0700, gone at the end", "[enforce]")
{
    Setup s;
    efs::path run;
    std::string b_dir;
    {
        SandboxDir d = s.create();
        run = d.run_dir();
        CHECK(run.parent_path() == efs::canonical(s.base));
        CHECK(run.filename().string().starts_with("run-"));
        CHECK(d.same_filesystem());
        CHECK(d.removed().empty());
        CHECK(efs::exists(run / "lock"));
        auto a = d.command_dirs();
        auto b = d.command_dirs();
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(a->upper != b->upper);
        CHECK(a->upper.parent_path() == a->work.parent_path());
        CHECK(mode_of(a->upper) == 0700);
        CHECK(mode_of(a->work) == 0700);
        // One mount point for every command's mask, the run's: no directory made and freed a command.
        CHECK(a->mask == b->mask);
        CHECK(a->mask.parent_path() == run);
        CHECK(mode_of(a->mask) == 0700);
        struct stat st;
        REQUIRE(::stat(a->upper.c_str(), &st) == 0);
        CHECK(st.st_uid == ::geteuid());
        // The overlay's work/work is mode 000 with a whiteout in it; removing copes.
        put_dir(a->work / "work", 0);
        REQUIRE(d.remove(*a).ok());
        CHECK(!efs::exists(a->upper.parent_path()));
        CHECK(efs::is_directory(b->mask));
        b_dir = b->upper.parent_path().filename().string();
        put_dir(b->work / "work");
        put_file(b->work / "work/#a", "");
        REQUIRE(::chmod((b->work / "work").c_str(), 0) == 0);
        CHECK(!d.remove(SandboxDir::CommandDirs{s.dir.path / "elsewhere/upper", {}}).ok());
    }
    CHECK(!efs::exists(run));
    CHECK(efs::exists(s.base));
    // The run directory became a finished run's in one rename, with b in it, for the next run to free.
    auto done = entries_of(s.base, "done-");
    REQUIRE(done.size() == 1);
    CHECK(efs::is_directory(s.base / done[0] / b_dir));
    {
        SandboxDir next = s.create();
        CHECK(next.removed().empty());  // not a killed run's: nothing said of it
        CHECK(entries_of(s.base, "done-").empty());
        CHECK(efs::is_directory(next.run_dir() / done[0]));  // claimed under the base lock
        bool asked = false;
        next.remove_left_by_finished_runs([&] { return std::exchange(asked, true); });  // stops after one
        CHECK(entries_of(next.run_dir(), "done-").size() == 1);
        next.remove_left_by_finished_runs([] { return false; });
        CHECK(entries_of(next.run_dir(), "done-").empty());
    }
    // The next run's own directory went the same way; no run directory is left.
    CHECK(entries_of(s.base, "done-").size() == 1);
    CHECK(entries_of(s.base, "run-").empty());
}

TEST_CASE("removing a run directory never follows a link out of it", "[enforce]")
{
    Setup s;
    efs::path outside = s.dir.path / "outside";
    put_file(outside / "precious", "keep");
    {
        SandboxDir d = s.create();
        auto c = d.command_dirs();
        REQUIRE(c.ok());
        put_link(c->upper / "dist", outside.string());
        put_link(d.run_dir() / "escape", outside.string());
    }
    CHECK(tree_of(outside) == std::map<std::string, std::string>{{"precious", "f:keep"}});
}

TEST_CASE("run directories of killed runs are removed and reported; live ones are left", "[enforce]")
{
    Setup s;
    put_dir(s.base, 0700);
    leave_killed_run(s.base, "run-killed");
    leave_killed_run(s.base, "run-nolock", false);  // killed before it made its lock file
    put_dir(s.base / "not-a-run");
    SandboxDir live = s.create();
    CHECK(live.removed().size() == 2);
    CHECK(!efs::exists(s.base / "run-killed"));
    CHECK(!efs::exists(s.base / "run-nolock"));
    CHECK(efs::exists(s.base / "not-a-run"));

    // Another run, here or in another workspace, leaves a live run alone: its lock is held.
    SandboxDir second = s.create();
    CHECK(second.removed().empty());
    CHECK(efs::exists(live.run_dir()));
}

TEST_CASE("a run killed with SIGKILL is cleaned by the next; one alive in another process is not", "[enforce]")
{
    Setup s;
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        auto d = SandboxDir::create(s.ws, s.chosen());
        char ok = d.ok() ? '1' : '0';
        if (d.ok())
            (void)d->command_dirs();
        (void)!::write(ready[1], &ok, 1);
        ::pause();  // until killed: no destructor runs
        ::_exit(0);
    }
    ::close(ready[1]);
    char ok = 0;
    REQUIRE(::read(ready[0], &ok, 1) == 1);
    ::close(ready[0]);
    REQUIRE(ok == '1');
    {
        SandboxDir other = s.create();
        CHECK(other.removed().empty());  // the child is alive and holds its lock
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    SandboxDir next = s.create();
    REQUIRE(next.removed().size() == 1);
    CHECK(!efs::exists(next.removed()[0]));
}

TEST_CASE("QK_SANDBOX_DIR inside the workspace, not creatable, or shared with others is refused", "[enforce]")
{
    Setup s;
    auto inside = SandboxDir::create(s.ws, {s.ws / "sub", {}});
    REQUIRE(!inside.ok());
    CHECK_THAT(inside.error().message, Catch::Contains("QK_SANDBOX_DIR") && Catch::Contains("inside the workspace"));
    CHECK(!efs::exists(s.ws / "sub"));

    put_file(s.dir.path / "a-file", "");
    auto under_file = SandboxDir::create(s.ws, {s.dir.path / "a-file/sub", {}});
    REQUIRE(!under_file.ok());
    CHECK_THAT(under_file.error().message, Catch::Contains("cannot create"));

    put_dir(s.dir.path / "shared", 0777);
    auto shared = SandboxDir::create(s.ws, {s.dir.path / "shared", {}});
    REQUIRE(!shared.ok());
    CHECK_THAT(shared.error().message, Catch::Contains("others may write"));

    put_dir(s.base, 0700);
    put_link(s.dir.path / "link", s.base.string());
    auto via_link = SandboxDir::create(s.ws, {s.ws.parent_path() / "link", {}});  // resolved, then checked
    CHECK(via_link.ok());
}

TEST_CASE("candidates: the first outside the workspace on its filesystem wins, else the first usable", "[enforce]")
{
    Setup s;
    SandboxDir::Bases bases{std::nullopt, {s.ws / "inside", s.dir.path / "first", s.dir.path / "second"}};
    auto d = SandboxDir::create(s.ws, bases);
    REQUIRE(d.ok());
    CHECK(d->base() == efs::canonical(s.dir.path / "first"));
    CHECK(!efs::exists(s.ws / "inside"));

    struct stat shm, tmp;
    if (::stat("/dev/shm", &shm) == 0 && ::stat(s.dir.path.c_str(), &tmp) == 0 && shm.st_dev != tmp.st_dev &&
        ::access("/dev/shm", W_OK) == 0) {
        std::string t = "/dev/shm/qk-enforce-base-XXXXXX";
        REQUIRE(::mkdtemp(t.data()) != nullptr);
        SECTION("same filesystem preferred over an earlier candidate")
        {
            auto same = SandboxDir::create(s.ws, {std::nullopt, {efs::path(t) / "b", s.dir.path / "same"}});
            REQUIRE(same.ok());
            CHECK(same->same_filesystem());
            CHECK(same->base() == efs::canonical(s.dir.path / "same"));
            CHECK(!efs::exists(efs::path(t) / "b"));  // not even made
        }
        SECTION("none on the same filesystem: the first usable, and apply will copy")
        {
            auto other = SandboxDir::create(s.ws, {std::nullopt, {efs::path(t) / "b"}});
            REQUIRE(other.ok());
            CHECK(!other->same_filesystem());
        }
        efs::remove_all(t);
    }

    auto none = SandboxDir::create(s.ws, {std::nullopt, {s.ws / "a"}});
    REQUIRE(!none.ok());
    CHECK_THAT(none.error().message, Catch::Contains("QK_SANDBOX_DIR") && Catch::Contains("inside the workspace"));
}

TEST_CASE("the bases come from QK_SANDBOX_DIR, XDG_CACHE_HOME or HOME, /var/tmp, the workspace's parent", "[enforce]")
{
    auto settings_of = [](std::map<std::string, std::string> vars) {
        auto read = qk::test::settings_from(std::move(vars));
        REQUIRE(read);
        return read->sandbox;
    };
    const std::string uid = std::to_string(::geteuid());
    {
        auto bases = SandboxDir::bases(settings_of({{"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}}), "/w/repo");
        CHECK(!bases.chosen);
        CHECK(bases.candidates ==
              std::vector<efs::path>{"/xdg/qk/sandbox", "/var/tmp/qk-sandbox-" + uid, "/w/.qk-sandbox-" + uid});
    }
    {
        // The XDG spec: a relative XDG_CACHE_HOME is invalid, and ignored.
        auto bases = SandboxDir::bases(
            settings_of({{"QK_SANDBOX_DIR", "/sb"}, {"XDG_CACHE_HOME", "relative"}, {"HOME", "/home/u"}}), "/w/repo");
        CHECK(bases.chosen == efs::path("/sb"));
        CHECK(bases.candidates.front() == efs::path("/home/u/.cache/qk/sandbox"));
    }
}

TEST_CASE("remove_tree works without root: unreadable and read-only directories", "[enforce]")
{
    // Root reads anything; a process without CAP_DAC_OVERRIDE needs the chmod dance, so run it as nobody.
    TempDir t("qk-enforce-rm");
    efs::path top = t.path / "top";
    put_file(top / "ro/f", "x");
    put_file(top / "work/work/#a", "");
    put_dir(top / "deep/a/b/c");
    put_link(top / "deep/a/link", "/etc");
    if (::geteuid() == 0) {
        REQUIRE(::chown(t.path.c_str(), 65534, 65534) == 0);
        for (auto& e : efs::recursive_directory_iterator(top))
            REQUIRE(::lchown(e.path().c_str(), 65534, 65534) == 0);
        REQUIRE(::chown(top.c_str(), 65534, 65534) == 0);
    }
    REQUIRE(::chmod((top / "ro").c_str(), 0500) == 0);
    REQUIRE(::chmod((top / "work/work").c_str(), 0) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
            ::_exit(3);
        qk::UniqueFd dir(::open(t.path.c_str(), O_PATH | O_DIRECTORY));
        ::_exit(enforce::tree::remove_tree(dir.get(), "top", "top").ok() ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(!efs::exists(top));
}
