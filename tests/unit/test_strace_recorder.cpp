// The strace engine end to end: real commands under real strace. They need ptrace only; without a
// working strace they skip, unless QK_REQUIRE_PRIVILEGED is set (CI), where they fail.
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "qk/record/recording_sink.hpp"
#include "record/strace_parser.hpp"
#include "record/strace_recorder.hpp"
#include "recording_queries.hpp"
#include "test_support.hpp"

using qk::test::paths_with;

using namespace qk::record;
using Paths = std::vector<std::string>;

namespace {

std::unique_ptr<StraceRecorder> strace_or_skip()
{
    auto recorder = StraceRecorder::create();
    if (recorder)
        return std::move(recorder).value();
    qk::test::skip_or_fail("strace cannot record here: " + recorder.error().message);
    return nullptr;
}

bool has(const Paths& paths, const std::string& path)
{
    return std::find(paths.begin(), paths.end(), path) != paths.end();
}

std::string real(const char* path)
{
    char buf[PATH_MAX];
    return ::realpath(path, buf) ? std::string(buf) : std::string(path);
}

Command sh(std::string script, std::string cwd = "/")
{
    return Command{{"/bin/sh", "-c", std::move(script)}, std::move(cwd)};
}

}  // namespace

TEST_CASE("strace recorder: reads, probes and the exit code of a shell pipeline", "[record][strace][privileged]")
{
    auto recorder = strace_or_skip();
    if (!recorder)
        return;
    // ls looks with statx, which is no open: cat's open is the probe.
    auto trace = recorder->record(
        sh("cat /etc/hostname > /dev/null; cat /nonexistent-qk 2>/dev/null; ls /nonexistent-qk 2>/dev/null"));
    REQUIRE(trace);
    CHECK(trace->recorder == "strace");
    const Recording& rec = trace->recording;
    INFO("incomplete: " << (rec.complete() ? "" : rec.incomplete_reasons().front()));
    CHECK(rec.complete());
    CHECK(has(paths_with(rec, kRead), real("/etc/hostname")));
    CHECK(has(paths_with(rec, kRead), real("/bin/sh")));
    CHECK(has(paths_with(rec, kProbe), "/nonexistent-qk"));
    CHECK(has(paths_with(rec, kWrite), "/dev/null"));
    CHECK_FALSE(has(paths_with(rec, kRead), "/nonexistent-qk"));
    // ls exits 2 on a missing operand; the shell passes it on.
    CHECK(trace->status.signal == 0);
    CHECK(trace->status.code == 2);
    CHECK(trace->leftovers_killed == 0);
    // The shell, two cats and ls, with their argv as exec'd.
    CHECK(rec.processes().size() == 4);
    bool saw_cat = false;
    for (const auto& [pid, p] : rec.processes())
        saw_cat |= p.argv == Paths{"cat", "/etc/hostname"};
    CHECK(saw_cat);
}

TEST_CASE("strace recorder: exit codes and signals pass through", "[record][strace][privileged]")
{
    auto recorder = strace_or_skip();
    if (!recorder)
        return;
    auto exited = recorder->record(sh("exit 3"));
    REQUIRE(exited);
    CHECK(exited->status.code == 3);
    CHECK(exited->status.signal == 0);
    auto killed = recorder->record(sh("kill -9 $$"));
    REQUIRE(killed);
    CHECK(killed->status.signal == 9);
    CHECK(killed->recording.complete());
}

TEST_CASE("strace recorder: a missing command is an error", "[record][strace][privileged]")
{
    auto recorder = strace_or_skip();
    if (!recorder)
        return;
    auto missing = recorder->record(Command{{"qk-no-such-command-xyz"}, "/"});
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, Catch::Contains("qk-no-such-command-xyz"));
    auto no_cwd = recorder->record(Command{{"/bin/true"}, "/qk-no-such-directory"});
    CHECK_FALSE(no_cwd);
    // It exists but is no program: strace's child fails to exec it, which is no run of the command.
    auto not_a_program = recorder->record(Command{{"/etc/hostname"}, "/"});
    REQUIRE_FALSE(not_a_program);
    CHECK_THAT(not_a_program.error().message, Catch::Contains("cannot run '/etc/hostname'"));
}

TEST_CASE("strace recorder: relative paths resolve against the command's cwd and its chdirs",
          "[record][strace][privileged]")
{
    auto recorder = strace_or_skip();
    if (!recorder)
        return;
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("qk-strace-test-" + std::to_string(::getpid()));
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "in.txt") << "x";
    std::ofstream(dir / "sub" / "deep.txt") << "y";
    std::string d = real(dir.c_str());
    auto trace = recorder->record(
        sh("cat in.txt > out.txt && mkdir made && (cd sub && cat deep.txt > /dev/null) && mv out.txt moved.txt && rm moved.txt", d));
    REQUIRE(trace);
    const Recording& rec = trace->recording;
    CHECK(trace->status.code == 0);
    CHECK(has(paths_with(rec, kRead), d + "/in.txt"));
    CHECK(has(paths_with(rec, kRead), d + "/sub/deep.txt"));
    CHECK(has(paths_with(rec, kWrite), d + "/out.txt"));
    CHECK(has(paths_with(rec, kCreate), d + "/made"));
    CHECK(has(paths_with(rec, kRemove), d + "/moved.txt"));
    CHECK(rec.renames().count({d + "/out.txt", d + "/moved.txt"}) == 1);
    fs::remove_all(dir);
}

TEST_CASE("strace recorder: what the command leaves running is killed and counted", "[record][strace][privileged]")
{
    auto recorder = strace_or_skip();
    if (!recorder)
        return;
    auto start = std::chrono::steady_clock::now();
    auto trace = recorder->record(sh("sleep 30 & exit 4"));
    REQUIRE(trace);
    CHECK(trace->status.code == 4);
    CHECK(trace->leftovers_killed == 1);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}

TEST_CASE("strace parser: a call strace could not name, of a process killed in it, is no error", "[record][strace]")
{
    // As strace 6.1 prints a leftover SIGKILLed while entering a call (the e2e leftover scenario).
    Recording rec;
    RecordingSink sink(rec);
    StraceParser parser(sink, "/");
    CHECK(parser.feed("100 execve(\"/bin/sleep\", [\"sleep\", \"300\"], 0x7ffd /* 1 var */) = 0"));
    CHECK(parser.feed("100 ?\?\?()                             = ?"));
    CHECK(parser.feed("100 +++ killed by SIGKILL +++"));
    CHECK(parser.finish());
    REQUIRE(parser.root_wait_status());
    CHECK(WIFSIGNALED(*parser.root_wait_status()));
    // Any other line strace would not write is still one.
    CHECK_FALSE(parser.feed("100 ?\?\?(1, 2)"));
}
