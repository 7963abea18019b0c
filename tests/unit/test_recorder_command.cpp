// What a Command carries beyond argv and cwd (environment, output fd, process group, stop), under
// every engine that can record here: strace, and eBPF where it loads (root, a kernel with BPF). As
// the task runner's plain launcher does: signals reset, stdin /dev/null, only fds 0, 1, 2 passed on.
// An engine that cannot record here is left out with a warning; with none left a case skips. Under
// QK_REQUIRE_PRIVILEGED (CI) either is a failure.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "qk/record/recorder.hpp"
#include "qk/util/unique_fd.hpp"
#include "qk/record/cgroup.hpp"
#include "qk/record/process.hpp"
#include "record/strace_recorder.hpp"
#ifdef QK_WITH_BPF
#include "record/ebpf_session.hpp"
#endif
#include "test_support.hpp"
#include "recording_queries.hpp"

using qk::test::paths_with;
using qk::test::require_privileged;

using namespace qk::record;
using qk::UniqueFd;
using namespace std::chrono_literals;

namespace {

struct Engine {
    std::string name;
    std::unique_ptr<Recorder> recorder;
};

// Created once: loading the BPF programs and probing strace take a while.
std::vector<Engine>& engines()
{
    static std::vector<Engine> list = [] {
        std::vector<Engine> out;
        if (auto strace = StraceRecorder::create())
            out.push_back({"strace", std::move(strace).value()});
        else if (require_privileged())
            FAIL("strace cannot record here: " << strace.error().message);
        else
            WARN("skipped the strace engine: it cannot record here: " << strace.error().message);
#ifdef QK_WITH_BPF
        if (auto ebpf = make_recorder(RecorderChoice::ebpf, qk::RecorderSettings{}))
            out.push_back({"ebpf", std::move(ebpf).value()});
        else if (require_privileged())
            FAIL("the eBPF recorder cannot record here: " << ebpf.error().message);
        else
            WARN("skipped the eBPF engine: " << ebpf.error().message);
#endif
        return out;
    }();
    if (list.empty())  // the case runs nothing: it says so rather than pass
        qk::test::skip("no engine can record here");
    return list;
}

// A file the command writes its output to, read back once it is done.
class OutputFile {
public:
    OutputFile() : path_(std::filesystem::temp_directory_path() / "qk-output-XXXXXX")
    {
        std::string t = path_.string();
        fd_.reset(::mkostemp(t.data(), O_CLOEXEC));
        REQUIRE(fd_.valid());
        path_ = t;
    }
    ~OutputFile() { ::unlink(path_.c_str()); }
    int fd() const { return fd_.get(); }
    std::string text() const
    {
        std::ifstream in(path_);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

private:
    std::filesystem::path path_;
    UniqueFd fd_;
};

Command sh(std::string script, int output_fd, std::string cwd = "/")
{
    Command cmd;
    cmd.argv = {"/bin/sh", "-c", std::move(script)};
    cmd.cwd = std::move(cwd);
    cmd.output_fd = output_fd;
    return cmd;
}

bool has(const std::vector<std::string>& paths, const std::string& path)
{
    return std::find(paths.begin(), paths.end(), path) != paths.end();
}

// Running, or stopped: not gone, nor a zombie waiting for whoever inherited it to reap it.
bool alive(pid_t pid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return false;
    auto paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z' && line[paren + 2] != 'X';
}

}  // namespace

TEST_CASE("a command gets the environment given, and only that", "[record][recorder-command][privileged]")
{
    ::setenv("QK_TEST_PARENT_ONLY", "leaked", 1);
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        OutputFile out;
        Command cmd = sh("echo \"[$QK_TEST_VAR][$QK_TEST_PARENT_ONLY]\"", out.fd());
        cmd.env = {"QK_TEST_VAR=hello world", "PATH=/usr/bin:/bin"};
        auto trace = recorder->record(cmd);
        REQUIRE(trace);
        CHECK(trace->status.code == 0);
        CHECK(out.text() == "[hello world][]\n");
    }
    ::unsetenv("QK_TEST_PARENT_ONLY");
}

TEST_CASE("output_fd takes stdout and stderr, stdin is /dev/null, no other fd is passed on",
          "[record][recorder-command][privileged]")
{
    // A pipe without O_CLOEXEC, as another thread might leave one: the command must not get it.
    int leak[2];
    REQUIRE(::pipe(leak) == 0);
    UniqueFd leak_read(leak[0]), leak_write(leak[1]);
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        OutputFile out;
        auto trace = recorder->record(
            sh("echo out; echo err >&2; cat; echo \"cat: $?\"; readlink /proc/$$/fd/0; ls /proc/$$/fd", out.fd()));
        REQUIRE(trace);
        CHECK(trace->status.code == 0);
        // Nothing of strace's own in there either.
        CHECK(out.text() == "out\nerr\ncat: 0\n/dev/null\n0\n1\n2\n");
    }
}

TEST_CASE("without output_fd the command inherits stdin, stdout, stderr and the caller's other fds",
          "[record][recorder-command][privileged]")
{
    // qk-trace's case: `qk-trace -- cat <(echo)` hands the command a descriptor it must keep.
    int given[2];
    REQUIRE(::pipe(given) == 0);
    UniqueFd given_read(given[0]), given_write(given[1]);
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        OutputFile out;
        // The test's own stdout, swapped for the file while the command runs.
        UniqueFd saved(::dup(1));
        REQUIRE(::dup2(out.fd(), 1) == 1);
        auto trace = recorder->record(
            sh("echo inherited; test -e /proc/$$/fd/" + std::to_string(given[0]) + " && echo kept", -1));
        REQUIRE(::dup2(saved.get(), 1) == 1);
        REQUIRE(trace);
        CHECK(out.text() == "inherited\nkept\n");
    }
}

TEST_CASE("a command starts with no blocked or ignored signal", "[record][recorder-command][privileged]")
{
    // As the runner does: SIGINT and SIGTERM blocked for a watcher thread, SIGPIPE ignored.
    sigset_t block, saved_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &block, &saved_mask);
    struct sigaction ignore {}, saved_pipe {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &saved_pipe);
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        OutputFile out;
        // The command itself, not a shell, which blocks signals of its own while it waits for a child.
        Command cmd{{"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"}, "/"};
        cmd.output_fd = out.fd();
        auto trace = recorder->record(cmd);
        REQUIRE(trace);
        CHECK(out.text() == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
    }
    ::sigaction(SIGPIPE, &saved_pipe, nullptr);
    ::pthread_sigmask(SIG_SETMASK, &saved_mask, nullptr);
}

TEST_CASE("own_process_group puts the command in a process group of its own", "[record][recorder-command][privileged]")
{
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        for (bool own : {true, false}) {
            INFO("own_process_group: " << own);
            OutputFile out;
            // /proc/PID/stat: pid (comm) state ppid pgrp ...
            Command cmd = sh("cut -d' ' -f1,4,5 /proc/$$/stat", out.fd());
            cmd.own_process_group = own;
            auto trace = recorder->record(cmd);
            REQUIRE(trace);
            pid_t pid = 0, ppid = 0, pgid = 0;
            std::istringstream(out.text()) >> pid >> ppid >> pgid;
            REQUIRE(pid > 0);
            if (!own) {
                CHECK(pgid == ::getpgrp());
            } else if (name == "strace") {
                // strace starts the group and the command joins it: a terminal's Ctrl-C reaches neither.
                CHECK(pgid == ppid);
                CHECK(pgid != ::getpgrp());
            } else {
                CHECK(pgid == pid);
            }
        }
    }
}

TEST_CASE("on_start's stop ends the command and everything it started", "[record][recorder-command][privileged]")
{
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        qk::test::TempDir dir("qk-stop");
        std::string marker = (dir.path / "started").string();
        OutputFile out;
        Command cmd = sh("cat /etc/hostname > /dev/null; sleep 1000 & echo $! > bg.pid; touch started; sleep 1000",
                         out.fd(), dir.path.string());
        cmd.own_process_group = true;
        std::thread stopper;
        std::atomic<int> starts{0}, finishes{0};
        std::atomic<bool> finished_before_stop{false};
        cmd.on_start = [&](StopFn stop) {
            starts++;
            stopper = std::thread([&, stop = std::move(stop)] {
                for (int i = 0; i < 1000 && !std::filesystem::exists(marker); i++)
                    std::this_thread::sleep_for(10ms);
                finished_before_stop = finishes > 0;
                stop(false);
            });
        };
        cmd.on_finish = [&] { finishes++; };
        auto start = std::chrono::steady_clock::now();
        auto trace = recorder->record(cmd);
        auto took = std::chrono::steady_clock::now() - start;
        stopper.join();
        REQUIRE(trace);
        CHECK(starts == 1);
        CHECK(finishes == 1);
        CHECK_FALSE(finished_before_stop);
        CHECK(trace->status.signal == SIGTERM);
        CHECK(took < 20s);
        pid_t background = 0;
        std::ifstream(dir.path / "bg.pid") >> background;
        REQUIRE(background > 0);
        CHECK_FALSE(alive(background));
        // What it did before it was stopped is recorded.
        const Recording& rec = trace->recording;
        CHECK(has(paths_with(rec, kRead), std::filesystem::canonical("/etc/hostname").string()));
        CHECK(has(paths_with(rec, kWrite), marker));  // created too, which strace cannot tell
        CHECK(rec.processes().size() >= 4);  // sh, cat, two sleeps, touch
    }
}

TEST_CASE("a forced stop ends a command that ignores SIGTERM", "[record][recorder-command][privileged]")
{
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        qk::test::TempDir dir("qk-stop");
        std::string marker = (dir.path / "started").string();
        OutputFile out;
        // The ignored SIGTERM is inherited by sleep too.
        Command cmd = sh("trap '' TERM; touch started; sleep 1000", out.fd(), dir.path.string());
        std::thread stopper;
        std::atomic<bool> survived_sigterm{false};
        std::atomic<int> finishes{0};
        cmd.on_start = [&](StopFn stop) {
            stopper = std::thread([&, stop = std::move(stop)] {
                for (int i = 0; i < 1000 && !std::filesystem::exists(marker); i++)
                    std::this_thread::sleep_for(10ms);
                stop(false);
                std::this_thread::sleep_for(300ms);
                survived_sigterm = finishes == 0;
                stop(true);
            });
        };
        cmd.on_finish = [&] { finishes++; };
        auto start = std::chrono::steady_clock::now();
        auto trace = recorder->record(cmd);
        stopper.join();
        REQUIRE(trace);
        CHECK(survived_sigterm);
        CHECK(finishes == 1);
        CHECK(trace->status.signal == SIGKILL);
        CHECK(std::chrono::steady_clock::now() - start < 20s);
    }
}

TEST_CASE("argv[0] is looked up in the PATH of the command's environment", "[record][recorder-command][privileged]")
{
    qk::test::TempDir dir("qk-path");
    dir.write("bin/qk-test-program", "#!/bin/sh\necho \"found: $0\"\n");
    std::filesystem::permissions(dir.path / "bin/qk-test-program", std::filesystem::perms::owner_all);
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        {
            OutputFile out;
            Command cmd{{"qk-test-program"}, "/"};
            cmd.env = {"PATH=/nonexistent-qk:" + (dir.path / "bin").string()};
            cmd.output_fd = out.fd();
            auto trace = recorder->record(cmd);
            REQUIRE(trace);
            CHECK(out.text() == "found: " + (dir.path / "bin/qk-test-program").string() + "\n");
        }
        {
            // Not in our PATH, nor in the PATH given.
            Command cmd{{"qk-test-program"}, "/"};
            cmd.env = {"PATH=/usr/bin:/bin"};
            int calls = 0;
            cmd.on_start = [&](const StopFn&) { calls++; };
            cmd.on_finish = [&] { calls++; };
            auto trace = recorder->record(cmd);
            REQUIRE_FALSE(trace);
            CHECK_THAT(trace.error().message, Catch::Contains("qk-test-program"));
            CHECK(calls == 0);
        }
        {
            // No PATH at all: the default one, as exec has.
            OutputFile out;
            Command cmd{{"sh", "-c", "echo default"}, "/"};
            cmd.env = {"QK_TEST_VAR=1"};
            cmd.output_fd = out.fd();
            auto trace = recorder->record(cmd);
            REQUIRE(trace);
            CHECK(out.text() == "default\n");
        }
    }
}

TEST_CASE("Recording::merge adds up two commands' recordings", "[record][recorder-command]")
{
    Recording a, b;
    a.add("/w/in", kRead);
    a.add("/w/out", kWrite | kCreate);
    a.add_rename("/w/tmp", "/w/out");
    a.add_alias("/w/link", "/w/in");
    a.process(10).argv = {"cc"};
    a.mark_incomplete("lost 1 event");
    b.add("/w/in", kList);
    b.add("/w/gone", kRemove);
    b.add_rename("/w/x", "/w/y");
    b.add_alias("/w/link", "/w/elsewhere");
    b.add_alias("/w/l2", "/w/out");
    b.process(11).argv = {"ld"};
    b.mark_incomplete("lost 1 event");
    b.mark_incomplete("32-bit calls");

    a.merge(b);
    CHECK(a.paths().at("/w/in") == (kRead | kList));
    CHECK(a.paths().at("/w/out") == (kWrite | kCreate));
    CHECK(a.paths().at("/w/gone") == kRemove);
    CHECK(a.paths().size() == 3);
    CHECK(a.renames().size() == 2);
    CHECK(a.renames().count({"/w/x", "/w/y"}) == 1);
    CHECK(a.aliases().at("/w/link") == "/w/in");  // the first spelling seen wins, as in add_alias
    CHECK(a.aliases().at("/w/l2") == "/w/out");
    REQUIRE(a.processes().size() == 2);
    CHECK(a.processes().at(11).argv == std::vector<std::string>{"ld"});
    CHECK(a.incomplete_reasons() == std::vector<std::string>{"lost 1 event", "32-bit calls"});
    CHECK_FALSE(a.complete());

    Recording empty;
    empty.merge(Recording());
    CHECK(empty.complete());
    CHECK(empty.paths().empty());
}

TEST_CASE("record_probes = false leaves failed lookups out, and nothing else", "[record][recorder-command][privileged]")
{
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        for (bool probes : {true, false}) {
            INFO("record_probes: " << probes);
            OutputFile out;
            Command cmd = sh("cat /nonexistent-qk-probe 2>/dev/null; cat /etc/hostname > /dev/null; "
                             "no-such-program-qk 2>/dev/null; true",
                             out.fd());
            cmd.record_probes = probes;
            auto trace = recorder->record(cmd);
            REQUIRE(trace);
            CHECK(trace->recording.complete());
            CHECK(has(paths_with(trace->recording, kRead), "/etc/hostname"));
            CHECK(has(paths_with(trace->recording, kProbe), "/nonexistent-qk-probe") == probes);
            CHECK(paths_with(trace->recording, kProbe).empty() == !probes);
        }
    }
}

namespace {

// The paths under `root` that have any of `access`, relative to it.
std::vector<std::string> under(const Recording& rec, std::uint16_t access, const std::string& root)
{
    std::vector<std::string> out;
    for (const auto& path : paths_with(rec, access))
        if (path.starts_with(root + "/"))
            out.push_back(path.substr(root.size() + 1));
    return out;
}

// A directory and a shell script that fail calls every way: ENOENT (probes), EACCES and EPERM
// (denials: Landlock, through tests/scenarios/denied.c as built next to this binary; a file of mode
// 000 opened as nobody; an exec without an execute bit) and others (EISDIR, EEXIST, ENOTDIR), which no
// option records.
// A shell that looks for the same absent names round after round, from its cwd and from sub/, by
// relative and absolute names, with builtins only (no exec, whose PATH search probes too).
[[maybe_unused]] std::string probing_script(int rounds, const std::string& root)  // unused without eBPF
{
    return "i=0; while [ $i -lt " + std::to_string(rounds) +
           " ]; do test -e missing; test -r " + root + "/absent-too; true 2>/dev/null < missing; "
           "cd sub; test -e missing; cd ..; i=$((i + 1)); done; true";
}

struct FailingCalls {
    qk::test::TempDir dir{"qk-denials"};
    std::string root = dir.path.string();
    std::string script;

    const std::vector<std::string> denied = {"ll/bin/tool",        "ll/secret.txt", "ll/secret2.txt",
                                             "ll/sub/secret3.txt", "notexec",       "zero.txt"};
    const std::vector<std::string> probed = {"ll/allowed/missing", "ll/allowed/nope", "missing"};
    const std::vector<std::string> read = {"ll/allowed/ok.txt"};

    FailingCalls()
    {
        namespace fs = std::filesystem;
        fs::permissions(dir.path, fs::perms(0755));  // nobody looks names up in it
        dir.write("zero.txt", "z");
        fs::permissions(dir.path / "zero.txt", fs::perms::none);
        dir.write("notexec", "#!/bin/sh\n");
        dir.write("exists", "e");
        fs::create_directories(dir.path / "sub");
        // tests/scenarios/denied.c's ground, as tests/e2e/scenarios.py lays it out.
        dir.write("ll/allowed/ok.txt", "ok");
        dir.write("ll/secret.txt", "s");
        dir.write("ll/secret2.txt", "s");
        dir.write("ll/sub/secret3.txt", "s");
        fs::create_symlink("../secret2.txt", dir.path / "ll/allowed/to-secret2");
        fs::create_directories(dir.path / "ll/bin");
        fs::copy_file("/bin/true", dir.path / "ll/bin/tool");
        std::error_code ec;
        fs::path scenario = fs::read_symlink("/proc/self/exe", ec).parent_path() / "scenarios" / "denied";
        REQUIRE(::access(scenario.c_str(), X_OK) == 0);
        script = "cat missing 2>/dev/null\n"
                 "setpriv --reuid=65534 --regid=65534 --clear-groups -- cat zero.txt 2>/dev/null\n"
                 "./notexec 2>/dev/null\n"
                 "(: > sub) 2>/dev/null\n"
                 "(set -C; : > exists) 2>/dev/null\n"
                 "cat exists/x 2>/dev/null\n"
                 "'" + scenario.string() + "' '" + root + "/ll'; echo \"landlock $?\"\n";
    }
};

}  // namespace

TEST_CASE("record_denials: refusals only when asked; with neither option no failed call is recorded",
          "[record][recorder-command][privileged]")
{
    using Paths = std::vector<std::string>;
    FailingCalls ground;
    for (auto& [name, recorder] : engines()) {
        for (bool probes : {true, false}) {
            for (bool denials : {true, false}) {
                INFO("engine: " << name << ", record_probes: " << probes << ", record_denials: " << denials);
                OutputFile out;
                Command cmd = sh(ground.script, out.fd(), ground.root);
                cmd.record_probes = probes;
                cmd.record_denials = denials;
                auto trace = recorder->record(cmd);
                REQUIRE(trace);
                INFO(out.text());
                CHECK(trace->status.code == 0);
                CHECK(out.text() == "landlock 0\n");  // the Landlock scenario ran, and was refused as it expects
                const auto& rec = trace->recording;
                CHECK(rec.complete());
                CHECK(under(rec, kDenied, ground.root) == (denials ? ground.denied : Paths{}));
                CHECK(under(rec, kProbe, ground.root) == (probes ? ground.probed : Paths{}));
                // Whatever the options, the other failures leave no trace, and a refusal is never a read.
                CHECK(under(rec, kRead | kWrite | kCreate | kRemove | kList, ground.root) == ground.read);
                if (!probes && !denials)
                    CHECK(paths_with(rec, kProbe | kDenied).empty());  // anywhere: no failed call at all
            }
        }
    }
}

TEST_CASE("record_only_denials: the refusals and the processes, nothing else", "[record][recorder-command][privileged]")
{
    FailingCalls ground;
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        OutputFile out;
        Command cmd = sh(ground.script, out.fd(), ground.root);
        cmd.record_probes = false;
        cmd.record_denials = true;
        cmd.record_only_denials = true;
        auto trace = recorder->record(cmd);
        REQUIRE(trace);
        CHECK(out.text() == "landlock 0\n");
        const auto& rec = trace->recording;
        CHECK(under(rec, kDenied, ground.root) == ground.denied);
        // Anywhere: not one read (the shell, its libraries), write, creation, removal, listing or probe.
        CHECK(paths_with(rec, kRead | kWrite | kCreate | kRemove | kList | kProbe).empty());
        CHECK(rec.processes().size() >= 2);  // the shell and what it ran are still known
    }
}

TEST_CASE("record_only_denials with record_probes: the refusals and the probes, no success",
          "[record][recorder-command][privileged]")
{
    // Enforce over a read mask: a file the mask hides is not there, so what the task was refused shows
    // as an open that found nothing.
    FailingCalls ground;
    for (auto& [name, recorder] : engines()) {
        INFO("engine: " << name);
        OutputFile out;
        Command cmd = sh(ground.script, out.fd(), ground.root);
        cmd.record_probes = true;
        cmd.record_denials = true;
        cmd.record_only_denials = true;
        auto trace = recorder->record(cmd);
        REQUIRE(trace);
        const auto& rec = trace->recording;
        CHECK(under(rec, kDenied, ground.root) == ground.denied);
        CHECK(under(rec, kProbe, ground.root) == ground.probed);
        CHECK(paths_with(rec, kRead | kWrite | kCreate | kRemove | kList).empty());
    }
}

TEST_CASE("record_lookups: a stat or access that finds nothing is a probe, and only when asked",
          "[record][recorder-command][privileged]")
{
    FailingCalls ground;
    for (auto& [name, recorder] : engines()) {
        for (bool lookups : {false, true}) {
            INFO("engine: " << name << ", lookups: " << lookups);
            OutputFile out;
            Command cmd = sh("test -e looked-for; test -r looked-for-too; test -e exists && echo found", out.fd(),
                             ground.root);
            cmd.record_probes = true;
            cmd.record_denials = true;
            cmd.record_only_denials = true;
            cmd.record_lookups = lookups;
            auto trace = recorder->record(cmd);
            REQUIRE(trace);
            CHECK(out.text() == "found\n");
            const std::vector<std::string> expected =
                lookups ? std::vector<std::string>{"looked-for", "looked-for-too"} : std::vector<std::string>{};
            CHECK(under(trace->recording, kProbe, ground.root) == expected);
            CHECK(paths_with(trace->recording, kRead | kWrite | kCreate | kRemove | kList).empty());
        }
    }
}

#ifdef QK_WITH_BPF
// Runs `script` with /bin/sh in `cwd` (stdout to `out_fd`, -1: inherited), in a cgroup of its own that
// `session` records into `sink` as `options` ask; what the programs counted for it, once it has ended.
qk_task_stats run_tracked(EbpfSession& session, RecordingSink& sink, TrackOptions options, const std::string& script,
                          const std::string& cwd, int out_fd)
{
    auto cgroup = TaskCgroup::create("tracked-test");
    REQUIRE(cgroup);
    REQUIRE(session.track(cgroup->id(), cgroup->level(), &sink, options));
    auto pid = spawn(SpawnRequest{"/bin/sh", {"/bin/sh", "-c", script}, cwd, cgroup->fd(), {}, out_fd});
    REQUIRE(pid);
    CHECK(wait_exit(*pid).code == 0);
    cgroup->kill_all();
    CHECK(cgroup->wait_empty(10s));
    qk_task_stats stats = session.untrack(cgroup->id());
    CHECK(stats.lost == 0);
    return stats;
}

TEST_CASE("eBPF: the programs send a task's failed calls only as its options ask, before any path walk",
          "[record][recorder-command][privileged][ebpf]")
{
    // A sink that keeps whatever arrives, so that what it holds is what the kernel sent: with
    // QK_TASK_NO_PROBES and without QK_TASK_DENIALS, not one failed call.
    using Paths = std::vector<std::string>;
    auto session = EbpfSession::open(EbpfOptions{});
    if (!session) {
        qk::test::skip_or_fail("the eBPF recorder cannot load here: " + session.error().message);
        return;
    }
    FailingCalls ground;
    for (TrackOptions options : {TrackOptions{false, false}, TrackOptions{false, true}, TrackOptions{true, false},
                                 TrackOptions{true, true}, TrackOptions{true, true, true}, TrackOptions{false, true, true}}) {
        INFO("probes: " << options.probes << ", denials: " << options.denials);
        Recording rec;
        RecordingSink sink(rec);
        sink.keep_denials();
        OutputFile out;
        run_tracked(**session, sink, options, ground.script, ground.root, out.fd());
        CHECK(out.text() == "landlock 0\n");
        CHECK(under(rec, kDenied, ground.root) == (options.denials ? ground.denied : Paths{}));
        CHECK(under(rec, kProbe, ground.root) == (options.probes ? ground.probed : Paths{}));
        if (!options.probes)
            CHECK(paths_with(rec, kProbe).empty());
        if (!options.denials)
            CHECK(paths_with(rec, kDenied).empty());
        if (options.only_denials) {
            // The kernel sent no file success at all (probes only as asked); what was read comes from
            // the process events (each program run), which still come.
            CHECK(paths_with(rec, kWrite | kCreate | kRemove | kList | (options.probes ? 0 : kProbe)).empty());
            for (const std::string& p : paths_with(rec, kRead))
                CHECK(::access(p.c_str(), X_OK) == 0);
            CHECK_FALSE(has(paths_with(rec, kRead), ground.root + "/ll/allowed/ok.txt"));
        }
        else
            CHECK(under(rec, kRead | kWrite | kCreate | kRemove | kList, ground.root) == ground.read);
    }
}

TEST_CASE("eBPF: a task that wants only its refusals gets each probe once, from each directory",
          "[record][recorder-command][privileged][ebpf]")
{
    // Enforce over a read mask records probes to name what it refused; a compiler probes the same header
    // for every source. The recording must hold every distinct probe, the ring each only once. A
    // recording for the cache (not only refusals) gets every one: its keys hold what was absent.
    auto session = EbpfSession::open(EbpfOptions{});
    if (!session) {
        qk::test::skip_or_fail("the eBPF recorder cannot load here: " + session.error().message);
        return;
    }
    qk::test::TempDir dir("qk-probes-once");
    std::filesystem::create_directories(dir.path / "sub");
    const std::string root = dir.path.string();
    constexpr int kRounds = 300;
    const std::string script = probing_script(kRounds, root);
    for (bool only_denials : {true, false}) {
        INFO("only denials: " << only_denials);
        Recording rec;
        RecordingSink sink(rec);
        sink.keep_denials();
        if (only_denials)
            sink.keep_only_denials();
        const qk_task_stats stats = run_tracked(**session, sink, TrackOptions{true, true, only_denials, true}, script, root, -1);
        // The same name from two directories is two probes; absolute and relative spellings each count.
        CHECK(under(rec, kProbe, root) == std::vector<std::string>{"absent-too", "missing", "sub/missing"});
        // Each round looks for `missing` twice from the cwd (a stat, an open) and once from sub/, and for
        // absent-too by its absolute name: 4 probes a round.
        if (only_denials)
            CHECK(stats.events < 40);
        else
            CHECK(stats.events >= std::uint64_t{4} * kRounds);
    }
}
#endif
