// HelperServer and qk-sandbox-exec --serve, the real helper as built: the run's one helper forks each
// command's, which runs as one exec'd with the same command line would (its directory, environment, output
// and exit status), several at once; what it cannot start is refused as spawn refuses it; a helper that does
// not serve is found out before any command is its; and the server ends with its run. The commands here run
// under Landlock alone without a cgroup, which needs no privilege.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/helper_server.hpp"
#include "qk/enforce/landlock_abi.hpp"
#include "qk/enforce/sandbox_plan.hpp"
#include "qk/enforce/served_command.hpp"
#include "qk/util/fd_passing.hpp"
#include "qk/util/io.hpp"
#include "test_support.hpp"

using namespace qk;

namespace {

namespace fs = std::filesystem;

const std::string kHelper = QK_SANDBOX_EXEC_BINARY;

struct Pipe {
    UniqueFd r, w;
    Pipe()
    {
        int fds[2];
        REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
        r.reset(fds[0]);
        w.reset(fds[1]);
    }
    std::string drain()
    {
        w.reset();
        std::string out;
        REQUIRE(read_all(r.get(), out));
        return out;
    }
};

// A plan for one command under Landlock alone in `ws`, which it may read and write.
std::string write_plan(const fs::path& dir, const fs::path& ws, const std::string& name)
{
    enforce::SandboxPlan plan;
    plan.root = ws.string();
    plan.overlay = false;
    plan.grants = {{"", enforce::SandboxPlan::Grant::Access::read_write}};
    plan.result = (dir / (name + ".result")).string();
    plan.watch_pid = static_cast<int>(::getpid());
    fs::path file = dir / (name + ".plan");
    std::ofstream(file) << enforce::encode(plan);
    return file.string();
}

record::SpawnRequest request(const std::string& plan, const std::string& cwd, std::vector<std::string> command,
                             std::vector<std::string> env, int output)
{
    std::vector<std::string> argv{kHelper, plan, "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    return {kHelper, argv, cwd, -1, std::move(env), output, -1, false};
}

// This process's children that run `name` (from each thread's list).
std::vector<pid_t> children_named(const std::string& name)
{
    std::vector<pid_t> found;
    for (const auto& task : fs::directory_iterator("/proc/self/task")) {
        auto list = read_file((task.path() / "children").string());
        if (!list)
            continue;
        for (std::size_t pos = 0; pos < list->size();) {
            std::size_t end = list->find(' ', pos);
            std::string pid = list->substr(pos, end - pos);
            auto comm = read_file("/proc/" + pid + "/comm");
            if (comm && comm->rfind(name.substr(0, 15), 0) == 0)
                found.push_back(std::stoi(pid));
            pos = end == std::string::npos ? list->size() : end + 1;
        }
    }
    return found;
}

bool have_landlock()
{
    return enforce::landlock_abi() > 0;
}

}  // namespace

TEST_CASE("a served command runs in its directory, with its environment and output, and ends as it ended",
          "[sandbox][served]")
{
    if (!have_landlock())
        return test::skip_or_fail("Landlock is not enabled in this kernel");
    test::TempDir dir("qk-served");
    fs::path ws = dir.path / "ws";
    fs::create_directories(ws / "app");
    sandbox::HelperServer server(kHelper);
    REQUIRE(server.available());
    Pipe out;
    auto started = server.start(request(write_plan(dir.path, ws, "one"), (ws / "app").string(),
                                        {"/bin/sh", "-c", "pwd; echo \"$GREETING\"; exit 7"},
                                        {"PATH=/usr/bin:/bin", "GREETING=hello there"}, out.w.get()));
    REQUIRE(started);
    CHECK(started->pid > 0);
    auto ended = started->wait();
    REQUIRE(ended);
    CHECK(ended->code == 7);
    CHECK(ended->signal == 0);
    CHECK(out.drain() == (ws / "app").string() + "\nhello there\n");
    auto result = read_file((dir.path / "one.result").string());
    REQUIRE(result);
    auto decoded = enforce::decode_result(*result);
    REQUIRE(decoded);
    CHECK(decoded->exit_code == 7);
}

TEST_CASE("commands served side by side each end with their own status", "[sandbox][served]")
{
    if (!have_landlock())
        return test::skip_or_fail("Landlock is not enabled in this kernel");
    test::TempDir dir("qk-served");
    fs::path ws = dir.path / "ws";
    fs::create_directories(ws);
    sandbox::HelperServer server(kHelper);
    constexpr int kCommands = 6;
    std::vector<int> codes(kCommands, -1);
    std::vector<std::string> outputs(kCommands);
    std::vector<std::thread> threads;
    for (int i = 0; i < kCommands; ++i)
        threads.emplace_back([&, i] {
            Pipe out;
            auto started = server.start(request(write_plan(dir.path, ws, "c" + std::to_string(i)), ws.string(),
                                                {"/bin/sh", "-c", "echo $N; exit $N"},
                                                {"PATH=/bin", "N=" + std::to_string(i + 10)}, out.w.get()));
            if (!started)
                return;
            auto ended = started->wait();
            codes[i] = ended ? ended->code : -2;
            outputs[i] = out.drain();
        });
    for (auto& t : threads)
        t.join();
    for (int i = 0; i < kCommands; ++i) {
        CHECK(codes[i] == i + 10);
        CHECK(outputs[i] == std::to_string(i + 10) + "\n");
    }
}

TEST_CASE("a served helper that cannot read its plan ends with the setup status, and says so on its output",
          "[sandbox][served]")
{
    test::TempDir dir("qk-served");
    sandbox::HelperServer server(kHelper);
    Pipe out;
    const std::string missing = (dir.path / "no-such-plan").string();
    auto started = server.start(request(missing, dir.path.string(), {"true"}, {"PATH=/bin"}, out.w.get()));
    REQUIRE(started);
    auto ended = started->wait();
    REQUIRE(ended);
    CHECK(ended->code == enforce::kSetupFailedStatus);
    std::string said = out.drain();
    CHECK(said.find("qk-sandbox-exec:") != std::string::npos);
    CHECK(said.find("no-such-plan") != std::string::npos);
}

TEST_CASE("a command whose directory cannot be entered is refused as spawn refuses it", "[sandbox][served]")
{
    test::TempDir dir("qk-served");
    sandbox::HelperServer server(kHelper);
    Pipe out;
    const std::string gone = (dir.path / "gone").string();
    auto started = server.start(request((dir.path / "plan").string(), gone, {"true"}, {"PATH=/bin"}, out.w.get()));
    REQUIRE_FALSE(started);
    CHECK(started.error().sys_errno == ENOENT);
    CHECK(started.error().message.find("the working directory cannot be entered") != std::string::npos);
    CHECK(started.error().message.find(gone) != std::string::npos);
}

TEST_CASE("a helper that does not serve is found out before any command is its", "[sandbox][served]")
{
    test::TempDir dir("qk-served");
    fs::path fake = dir.path / "qk-sandbox-exec";
    std::ofstream(fake) << "#!/bin/sh\necho 'usage: qk-sandbox-exec PLAN -- PROGRAM ARGS...' >&2\nexit 2\n";
    fs::permissions(fake, fs::perms::owner_all);
    sandbox::HelperServer server(fake.string());
    CHECK_FALSE(server.available());
    CHECK_FALSE(server.available());  // and stays so, without starting it again
    Pipe out;
    auto started = server.start(request("plan", dir.path.string(), {"true"}, {"PATH=/bin"}, out.w.get()));
    REQUIRE_FALSE(started);
    CHECK(started.error().message.find("does not serve commands") != std::string::npos);
    CHECK(children_named("qk-sandbox-exec").empty());
}

TEST_CASE("the run's helper ends with its run, and is reaped", "[sandbox][served]")
{
    test::TempDir dir("qk-served");
    {
        sandbox::HelperServer server(kHelper);
        REQUIRE(server.available());
        CHECK(children_named("qk-sandbox-exec").size() == 1);
    }
    CHECK(children_named("qk-sandbox-exec").empty());
}

TEST_CASE("a server killed from outside is found out before the next command, which is not given to it",
          "[sandbox][served]")
{
    test::TempDir dir("qk-served");
    sandbox::HelperServer server(kHelper);
    REQUIRE(server.available());
    auto pids = children_named("qk-sandbox-exec");
    REQUIRE(pids.size() == 1);
    REQUIRE(::kill(pids[0], SIGKILL) == 0);
    // Its end of the channel closes as it dies; nothing here waits for more than that.
    struct pollfd none {};
    for (int i = 0; i < 5000 && server.available(); ++i)
        ::poll(&none, 0, 1);
    CHECK_FALSE(server.available());
    Pipe out;
    auto started = server.start(request("plan", dir.path.string(), {"true"}, {"PATH=/bin"}, out.w.get()));
    REQUIRE_FALSE(started);
    CHECK(started.error().message.find("has ended") != std::string::npos);
}

TEST_CASE("the served child reads a request whose body came in the header's own message", "[sandbox][served]")
{
    // HelperServer sends the header with the output fd, then the body; a peer may send both at once, and
    // the child must not take the body's first bytes for the header's.
    test::TempDir dir("qk-served");
    int chan[2], cmd[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) == 0);
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cmd) == 0);
    UniqueFd qk_end(chan[0]), server_end(chan[1]), mine(cmd[0]), theirs(cmd[1]);
    UniqueFd null_fd(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    auto pid = record::spawn({kHelper, {kHelper, "--serve"}, "/", -1, {"PATH=/bin"}, null_fd.get(), server_end.get(),
                              false});
    REQUIRE(pid);
    server_end.reset();
    const int fds[] = {theirs.get()};
    REQUIRE(send_with_fds(qk_end.get(), "run", fds) == 3);
    theirs.reset();
    const std::string missing = (dir.path / "no-such-plan").string();
    const std::string body = enforce::encode_body({{kHelper, missing, "--", "true"}, {"PATH=/bin"}, "/", false});
    Pipe out;
    REQUIRE(send_with_fd(mine.get(), enforce::served_header(body.size()) + body, out.w.get()) > 0);
    std::string answers;
    REQUIRE(read_all(mine.get(), answers));
    CHECK(answers.rfind("started ", 0) == 0);
    CHECK(answers.find("\nended " + std::to_string(enforce::kSetupFailedStatus << 8) + "\n") != std::string::npos);
    CHECK(out.drain().find("no-such-plan") != std::string::npos);
    qk_end.reset();
    CHECK(record::wait_exit(*pid).code == 0);
}
