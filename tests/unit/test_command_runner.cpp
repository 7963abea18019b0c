// CommandRunner and ProcessLauncher with a real /bin/sh: order and failure of commands, where and
// with what environment they run, their output line by line, cancelling, and dotenv files.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "run/command_runner.hpp"
#include "test_support.hpp"
#include "run/dotenv.hpp"

using namespace qk::run;
using qk::record::CancelToken;
using qk::record::Launcher;
using qk::record::LaunchRequest;
using qk::record::ProcessLauncher;
using qk::workspace::RunSpec;
namespace fs = std::filesystem;
using Lines = std::vector<std::string>;

using qk::test::TempDir;

namespace {


RunSpec commands(std::vector<std::string> cmds, bool parallel = false)
{
    RunSpec spec;
    spec.kind = RunSpec::Kind::commands;
    spec.executor = "nx:run-commands";
    spec.commands = std::move(cmds);
    spec.parallel = parallel;
    return spec;
}

TaskContext context(const TempDir& dir)
{
    TaskContext task;
    task.root = dir.path;
    task.project = "app";
    task.target = "build";
    task.environment = {"PATH=/usr/bin:/bin", "HOME=" + dir.path.string(), "EXISTING=fromenv"};
    return task;
}

// Runs a task, collecting its lines as the callback gets them.
struct Run {
    ProcessLauncher launcher;
    CommandRunner runner{launcher};
    std::mutex mutex;
    Lines lines;

    qk::Result<CommandResult> operator()(const RunSpec& spec, const TaskContext& task)
    {
        return runner.run(spec, task, [this](std::string_view line) {
            std::lock_guard lock(mutex);
            lines.emplace_back(line);
        });
    }
};

}  // namespace

TEST_CASE("command runner: one after another, stopping at the first failure", "[run][command]")
{
    TempDir dir;
    Run run;
    auto r = run(commands({"echo one", "echo oops >&2; exit 3", "echo never"}), context(dir));
    REQUIRE(r);
    CHECK_FALSE(r->succeeded);
    CHECK_FALSE(r->cancelled);
    CHECK(r->status.code == 3);
    CHECK(r->command == 1);
    CHECK(run.lines == Lines{"one", "oops"});
    CHECK(r->output == "one\noops\n");
}

TEST_CASE("command runner: all succeed, the output kept byte for byte", "[run][command]")
{
    TempDir dir;
    Run run;
    auto r = run(commands({"printf 'a\\r\\nb\\n'", "echo c"}), context(dir));
    REQUIRE(r);
    CHECK(r->succeeded);
    CHECK(r->status.code == 0);
    CHECK(r->command == 1);
    CHECK(run.lines == Lines{"a", "b", "c"});
    CHECK(r->output == "a\r\nb\nc\n");
}

TEST_CASE("command runner: parallel commands both run and one failing fails the task", "[run][command]")
{
    TempDir dir;
    REQUIRE(::mkfifo((dir.path / "go").c_str(), 0600) == 0);
    Run run;
    // The failing command waits for the other through the fifo, so both have surely run.
    auto r = run(commands({"read x < go; echo first; exit 4", "echo second; echo go > go"}, true), context(dir));
    REQUIRE(r);
    CHECK_FALSE(r->succeeded);
    CHECK(r->status.code == 4);
    CHECK(r->command == 0);
    Lines sorted = run.lines;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == Lines{"first", "second"});

    Run ok;
    auto both = ok(commands({"echo a", "echo b"}, true), context(dir));
    REQUIRE(both);
    CHECK(both->succeeded);
    CHECK(ok.lines.size() == 2);
}

TEST_CASE("command runner: a parallel failure stops the other commands", "[run][command]")
{
    TempDir dir;
    Run run;
    auto r = run(commands({"sleep 30", "exit 5"}, true), context(dir));
    REQUIRE(r);
    CHECK_FALSE(r->succeeded);
    CHECK(r->command == 1);
    CHECK(r->status.code == 5);
    CHECK(r->wall < std::chrono::seconds(20));  // sleep 30 was terminated, not waited for
}

TEST_CASE("command runner: cwd, relative and absolute; a missing one is an error", "[run][command]")
{
    TempDir dir;
    fs::create_directories(dir.path / "packages/lib");
    Run run;
    auto spec = commands({"pwd"});
    spec.cwd = "packages/lib";
    auto r = run(spec, context(dir));
    REQUIRE(r);
    spec.cwd = (dir.path / "packages").string();
    REQUIRE(run(spec, context(dir)));
    CHECK(run.lines == Lines{(dir.path / "packages/lib").string(), (dir.path / "packages").string()});

    spec.cwd = "no/such/dir";
    auto missing = run(spec, context(dir));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find((dir.path / "no/such/dir").string()) != std::string::npos);
    CHECK(missing.error().message.find("app:build") != std::string::npos);
}

TEST_CASE("command runner: node_modules/.bin first on PATH", "[run][command]")
{
    TempDir dir;
    dir.write("node_modules/.bin/hello", "#!/bin/sh\necho hello from bin\n");
    fs::permissions(dir.path / "node_modules/.bin/hello", fs::perms::owner_all);
    Run run;
    auto spec = commands({"hello", "echo \"$PATH\""});
    spec.path_prepend = {"packages/x/node_modules/.bin", "node_modules/.bin"};
    auto r = run(spec, context(dir));
    REQUIRE(r);
    CHECK(r->succeeded);
    REQUIRE(run.lines.size() == 2);
    CHECK(run.lines[0] == "hello from bin");
    CHECK(run.lines[1] == dir.path.string() + "/packages/x/node_modules/.bin:" + dir.path.string() +
                              "/node_modules/.bin:/usr/bin:/bin");
}

TEST_CASE("command runner: env, envFile and the task's variables", "[run][command]")
{
    TempDir dir;
    dir.write("config/.env", "# settings\n"
                             "export A=1\n"
                             "B=\"two words\" # a comment\n"
                             "C='lit ${A}'\n"
                             "D=${A}x\n"
                             "EXISTING=fromfile\n"
                             "FOO=fromfile\n"
                             "PATH=/nowhere\n");
    Run run;
    auto spec = commands({"echo \"$FOO|$A|$B|$C|$D|$EXISTING\"",
                          "echo \"$NX_TASK_TARGET_PROJECT|$NX_TASK_TARGET_TARGET|$QK_TASK|$PATH\""});
    spec.env = {{"FOO", "bar"}, {"PATH", "/ignored"}};
    spec.env_file = "config/.env";
    auto r = run(spec, context(dir));
    REQUIRE(r);
    // As Nx: the file does not override the environment; `env` overrides both, but not PATH.
    CHECK(run.lines == Lines{"bar|1|two words|lit ${A}|1x|fromenv", "app|build|app:build|/usr/bin:/bin"});

    spec.env_file = "config/.env.missing";
    auto missing = run(spec, context(dir));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("config/.env.missing") != std::string::npos);
}

TEST_CASE("command runner: a package.json script with its lifecycle events", "[run][command]")
{
    TempDir dir;
    RunSpec spec;
    spec.kind = RunSpec::Kind::script;
    spec.executor = "nx:run-script";
    spec.script = "build";
    spec.commands = {"echo \"$npm_lifecycle_event\"",
                     "echo \"$npm_lifecycle_event $npm_package_name@$npm_package_version\"",
                     "echo \"$npm_lifecycle_event\"; exit 2"};
    spec.lifecycle_events = {"prebuild", "build", "postbuild"};
    auto task = context(dir);
    task.package_name = "@acme/app";
    task.package_version = "1.2.3";
    Run run;
    auto r = run(spec, task);
    REQUIRE(r);
    CHECK(run.lines == Lines{"prebuild", "build @acme/app@1.2.3", "postbuild"});
    CHECK(r->status.code == 2);
    CHECK(r->command == 2);
}

TEST_CASE("command runner: a last line without newline arrives at the end", "[run][command]")
{
    TempDir dir;
    Run run;
    auto r = run(commands({"printf 'a\\nb'", "printf c"}), context(dir));
    REQUIRE(r);
    CHECK(run.lines == Lines{"a", "b", "c"});
    CHECK(r->output == "a\nbc");
}

TEST_CASE("command runner: a background child holding the pipe does not hang the task", "[run][command]")
{
    TempDir dir;
    Run run;
    auto r = run(commands({"sleep 30 & echo $! > sleeper.pid; echo done"}), context(dir));
    REQUIRE(r);
    CHECK(r->succeeded);
    CHECK(run.lines == Lines{"done"});
    CHECK(r->wall < std::chrono::seconds(20));
    pid_t sleeper = 0;
    std::ifstream(dir.path / "sleeper.pid") >> sleeper;
    REQUIRE(sleeper > 0);
    CHECK(::kill(sleeper, SIGKILL) == 0);  // still there: the runner did not wait for it
}

TEST_CASE("command runner: exit codes and a command killed by a signal", "[run][command]")
{
    TempDir dir;
    Run run;
    auto code = run(commands({"exit 7"}), context(dir));
    REQUIRE(code);
    CHECK(code->status.code == 7);
    CHECK(code->status.signal == 0);
    auto killed = run(commands({"kill -KILL $$"}), context(dir));
    REQUIRE(killed);
    CHECK_FALSE(killed->succeeded);
    CHECK(killed->status.signal == SIGKILL);
}

TEST_CASE("command runner: noop succeeds, an unsupported executor is an error", "[run][command]")
{
    TempDir dir;
    Run run;
    RunSpec noop;
    noop.kind = RunSpec::Kind::noop;
    auto r = run(noop, context(dir));
    REQUIRE(r);
    CHECK(r->succeeded);
    CHECK(r->output.empty());

    RunSpec other;
    other.kind = RunSpec::Kind::unsupported;
    other.executor = "@nx/js:tsc";
    other.problem = "qk cannot run the executor \"@nx/js:tsc\"";
    auto bad = run(other, context(dir));
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "app:build: qk cannot run the executor \"@nx/js:tsc\"");
}

TEST_CASE("command runner: cancel terminates the command, a second cancel kills it", "[run][command]")
{
    TempDir dir;
    for (bool stubborn : {false, true}) {
        ProcessLauncher launcher;
        CommandRunner runner(launcher);
        std::mutex m;
        std::condition_variable cv;
        bool started = false;
        std::thread canceller([&] {
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return started; });
            runner.cancel();
            if (stubborn)
                runner.cancel();
        });
        // `trap '' TERM` is inherited by sleep: only SIGKILL ends this one.
        std::string cmd = stubborn ? "trap '' TERM; echo started; sleep 30" : "echo started; sleep 30";
        auto r = runner.run(commands({cmd, "echo never"}), context(dir), [&](std::string_view) {
            std::lock_guard lock(m);
            started = true;
            cv.notify_all();
        });
        canceller.join();
        REQUIRE(r);
        CHECK(r->cancelled);
        CHECK_FALSE(r->succeeded);
        CHECK(r->status.signal == (stubborn ? SIGKILL : SIGTERM));
        CHECK(r->output == "started\n");
    }
}

TEST_CASE("process launcher: stdin, process group, no leaked fds, errors", "[run][command]")
{
    TempDir dir;
    ProcessLauncher launcher;
    CancelToken token;
    int fds[2];
    REQUIRE(::pipe(fds) == 0);  // no O_CLOEXEC: as another library's fd might be
    int leak = ::fcntl(fds[1], F_DUPFD, 50);
    REQUIRE(leak >= 50);
    LaunchRequest req{{"/bin/sh", "-c",
                       "readlink /proc/self/fd/0; set -- $(cat /proc/$$/stat); [ \"$5\" = \"$$\" ] && echo own-group; "
                       "[ -e /proc/$$/fd/" +
                           std::to_string(leak) + " ] && echo leaked || echo no-leak"},
                      dir.path.string(),
                      {"PATH=/usr/bin:/bin"},
                      fds[1]};
    auto st = launcher.run(req, token);
    ::close(fds[1]);
    ::close(leak);
    REQUIRE(st);
    CHECK(st->code == 0);
    std::string out;
    char buf[256];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    CHECK(out == "/dev/null\nown-group\nno-leak\n");

    req.output_fd = -1;  // closed above; -1 sends the output to /dev/null
    req.argv = {"/nonexistent/qk-shell"};
    auto missing = launcher.run(req, token);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.rfind("cannot run /nonexistent/qk-shell: ", 0) == 0);

    req.argv = {"qk-no-such-program"};
    CHECK_FALSE(launcher.run(req, token));

    req.argv = {"true"};  // found in the request's PATH
    auto found = launcher.run(req, token);
    INFO((found ? "" : found.error().message));
    REQUIRE(found);
    CHECK(found->code == 0);

    token.cancel();
    auto refused = launcher.run(req, token);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().sys_errno == ECANCELED);
    CHECK(refused.error().kind == qk::ErrorKind::cancelled);
}

TEST_CASE("command runner: a command refused as cancelled is no error of the task; its kind says so, not its errno",
          "[run][command]")
{
    // Refuses every command, as ProcessLauncher does once the run is being cancelled, with `kind`.
    struct Refusing final : Launcher {
        qk::ErrorKind kind;
        explicit Refusing(qk::ErrorKind k) : kind(k) {}
        qk::Result<qk::record::ExitStatus> run(const LaunchRequest&, CancelToken&) override
        {
            return qk::Error{"not started", ECANCELED, kind};
        }
    };
    TempDir dir;
    auto ignore = [](std::string_view) {};
    Refusing cancelled(qk::ErrorKind::cancelled);
    CommandRunner refused(cancelled);
    CHECK(refused.run(commands({"true", "true"}, true), context(dir), ignore));

    Refusing other(qk::ErrorKind::other);
    CommandRunner failed(other);
    auto r = failed.run(commands({"true", "true"}, true), context(dir), ignore);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "app:build: cannot start the command `true`: not started");
    CHECK(r.error().kind == qk::ErrorKind::other);
}

TEST_CASE("dotenv: syntax as the dotenv package reads it", "[run][command]")
{
    auto entries = parse_dotenv("# comment\n"
                                "  export  A = 1 \n"
                                "B=\"line1\\nline2\"\n"
                                "C='single # not a comment'\n"
                                "D=`back`\n"
                                "E=\"multi\n"
                                "line\"\n"
                                "F=unquoted # comment\n"
                                "not a variable\n"
                                "G:  colon\n"
                                "A=2\r\n"
                                "EMPTY=\n");
    std::vector<std::pair<std::string, std::string>> got;
    for (auto& e : entries)
        got.emplace_back(e.name, e.value);
    CHECK(got == std::vector<std::pair<std::string, std::string>>{{"A", "2"},
                                                                   {"B", "line1\nline2"},
                                                                   {"C", "single # not a comment"},
                                                                   {"D", "back"},
                                                                   {"E", "multi\nline"},
                                                                   {"F", "unquoted"},
                                                                   {"G", "colon"},
                                                                   {"EMPTY", ""}});
    CHECK(entries[2].literal);

    auto lookup = [](std::string_view name) -> std::optional<std::string> {
        if (name == "HOME")
            return std::string("/home/me");
        if (name == "BLANK")
            return std::string();
        return std::nullopt;
    };
    CHECK(expand_dotenv_value("$HOME/x ${HOME}y \\$HOME", lookup) == "/home/me/x /home/mey $HOME");
    CHECK(expand_dotenv_value("${NOPE:-def} ${BLANK:-def} ${BLANK-def} ${NOPE}|$", lookup) == "def def  |$");
}
