// The strace engine's parser: every line shape strace 6.1 writes for the traced calls, fed as text.
// Paths live under /qkt, which does not exist, so canonicalisation leaves them as spelled.
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include <catch2/catch.hpp>

#include "qk/record/recording_sink.hpp"
#include "record/strace_line.hpp"
#include "record/strace_names.hpp"
#include "record/strace_parser.hpp"
#include "recording_queries.hpp"

using qk::test::paths_with;

using namespace qk::record;
using Paths = std::vector<std::string>;

namespace {

struct Parsed {
    Recording rec;
    std::optional<int> root_status;
    std::vector<std::string> errors;
};

// `denials`: the sink keeps refused opens and execs, as for a Command with record_denials.
Parsed parse(std::initializer_list<std::string_view> lines, std::string cwd = "/qkt/w", pid_t root = 0,
             bool denials = false)
{
    Parsed out;
    RecordingSink sink(out.rec);
    if (denials)
        sink.keep_denials();
    StraceParser parser(sink, std::move(cwd), root);
    for (auto line : lines)
        if (auto s = parser.feed(line); !s)
            out.errors.push_back(s.error().message);
    if (auto s = parser.finish(); !s)
        out.errors.push_back(s.error().message);
    out.root_status = parser.root_wait_status();
    return out;
}

Parsed parse_file(const std::string& name)
{
    Parsed out;
    RecordingSink sink(out.rec);
    StraceParser parser(sink, "/tmp/qk-fx");
    std::ifstream in(std::string(QK_SOURCE_DIR) + "/tests/fixtures/strace/" + name);
    REQUIRE(in);
    for (std::string line; std::getline(in, line);)
        if (auto s = parser.feed(line); !s)
            out.errors.push_back(s.error().message);
    if (auto s = parser.finish(); !s)
        out.errors.push_back(s.error().message);
    out.root_status = parser.root_wait_status();
    return out;
}

std::string real(const char* path)
{
    char buf[PATH_MAX];
    return ::realpath(path, buf) ? std::string(buf) : std::string(path);
}

const std::string kTooLong = "a path longer than 4096 bytes could not be recorded whole";

}  // namespace

TEST_CASE("strace quoted strings decode every escape strace writes", "[record][strace]")
{
    auto q = strace::parse_quoted(R"("a\nb\"c d\351\\\t\r\v\f\x41\0z")");
    REQUIRE(q);
    CHECK(q->bytes == std::string("a\nb\"c d\xe9\\\t\r\v\fA", 14) + std::string(1, '\0') + "z");
    CHECK_FALSE(q->truncated);

    auto cut = strace::parse_quoted(R"("abc"...)");
    REQUIRE(cut);
    CHECK(cut->bytes == "abc");
    CHECK(cut->truncated);

    CHECK_FALSE(strace::parse_quoted(R"("unterminated)"));
    CHECK_FALSE(strace::parse_quoted(R"("bad escape \q")"));
    CHECK_FALSE(strace::parse_quoted(R"("x" trailing)"));
    CHECK_FALSE(strace::parse_quoted(R"("\400")"));
}

TEST_CASE("strace fd annotations: escapes, both (deleted) forms, AT_FDCWD", "[record][strace]")
{
    auto fd = strace::parse_fd(R"(3</tmp/w\74e\76i,r(d)\" x>(deleted))");
    REQUIRE(fd);
    CHECK(fd->fd == 3);
    CHECK(*fd->path == "/tmp/w<e>i,r(d)\" x");
    CHECK(fd->deleted);

    auto old = strace::parse_fd("3</tmp/#123 (deleted)>");
    REQUIRE(old);
    CHECK(*old->path == "/tmp/#123");
    CHECK(old->deleted);

    auto cwd = strace::parse_fd("AT_FDCWD</qkt/w>");
    REQUIRE(cwd);
    CHECK(cwd->fd == strace::kAtFdcwd);
    CHECK(*cwd->path == "/qkt/w");
    auto raw = strace::parse_fd("-100</qkt/w>");
    REQUIRE(raw);
    CHECK(raw->fd == strace::kAtFdcwd);
    auto bare = strace::parse_fd("7");
    REQUIRE(bare);
    CHECK(bare->fd == 7);
    CHECK_FALSE(bare->path);
    CHECK_FALSE(strace::parse_fd("3</unterminated"));
    CHECK_FALSE(strace::parse_fd("x3"));
}

TEST_CASE("strace calls split at top-level commas only", "[record][strace]")
{
    auto call = strace::parse_call(
        R"x(openat(3</a,b(c)>, "x, y)", {flags=O_RDONLY, resolve=0}, 24)   = -1 ENOENT (No such file or directory))x");
    REQUIRE(call);
    CHECK(call->name == "openat");
    REQUIRE(call->args.size() == 4);
    CHECK(call->args[0] == "3</a,b(c)>");
    CHECK(call->args[1] == R"x("x, y)")x");
    CHECK(call->args[2] == "{flags=O_RDONLY, resolve=0}");
    auto ret = strace::parse_return(call->result);
    REQUIRE(ret);
    CHECK(ret->value == -ENOENT);

    auto none = strace::parse_call("vfork()  = 12");
    REQUIRE(none);
    CHECK(none->args.empty());
    CHECK_FALSE(strace::parse_call(R"(openat(AT_FDCWD, "x)"));
    CHECK_FALSE(strace::parse_return("?")->known);
    CHECK(strace::parse_return("-1 1234 (Unknown error 1234)")->value == -1234);
    CHECK(strace::parse_return("-1 (errno 1234)")->value == -1234);
    // Seen from a process killed inside openat: no meaningful outcome.
    CHECK_FALSE(strace::parse_return("-1 (errno 18446744073709551359)")->known);
    CHECK_FALSE(strace::parse_return("-1 ENOTANERRNO (x)"));
    CHECK(*strace::parse_flags("O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC", strace::open_flag) ==
          (O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC));
    CHECK(*strace::parse_flags("O_RDONLY|0x20000000", strace::open_flag) == 0x20000000);
    CHECK(*strace::parse_flags("0x1200000|17", strace::clone_flag) == (0x1200000 | 17));
    CHECK_FALSE(strace::parse_flags("O_RDONLY|", strace::open_flag));
}

TEST_CASE("strace opens: reads, writes, O_EXCL creations, probes, listings", "[record][strace]")
{
    auto p = parse({
        R"(100   openat(AT_FDCWD</qkt/w>, "src/a.c", O_RDONLY|O_CLOEXEC) = 3</qkt/w/src/a.c>)",
        R"(100   openat(AT_FDCWD</qkt/w>, "out/b.o", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 4</qkt/w/out/b.o>)",
        R"(100   openat(AT_FDCWD</qkt/w>, "lock", O_RDWR|O_CREAT|O_EXCL, 0600) = 5</qkt/w/lock>)",
        R"(100   open("rel/x.h", O_RDONLY) = -1 ENOENT (No such file or directory))",
        R"(100   openat(AT_FDCWD</qkt/w>, "secret", O_RDONLY) = -1 EACCES (Permission denied))",
        R"(100   openat(AT_FDCWD</qkt/w>, "src", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 6</qkt/w/src>)",
        R"(100   openat2(AT_FDCWD</qkt/w>, "two", {flags=O_RDONLY|O_CLOEXEC, resolve=RESOLVE_NO_SYMLINKS}, 24) = 7</qkt/w/two>)",
        R"(100   creat("made", 0644)          = 8</qkt/w/made>)",
        R"(100   openat(AT_FDCWD</qkt/w>, "/usr", O_RDONLY) = 9</usr>)",
        R"(100   openat(AT_FDCWD</qkt/w>, "tmp", O_WRONLY|O_TMPFILE, 0600) = 10</qkt/w/tmp/#1234>(deleted))",
        R"(100   openat(AT_FDCWD</qkt/w>, "handle", O_RDONLY|O_PATH) = 11</qkt/w/handle>)",
        R"(100   +++ exited with 0 +++)",
    });
    CHECK(p.errors.empty());
    CHECK(paths_with(p.rec, kRead) == Paths{"/qkt/w/lock", "/qkt/w/src/a.c", "/qkt/w/two"});
    CHECK(paths_with(p.rec, kWrite) == Paths{"/qkt/w/lock", "/qkt/w/made", "/qkt/w/out/b.o"});
    // strace cannot see FMODE_CREATED: only O_EXCL proves a creation.
    CHECK(paths_with(p.rec, kCreate) == Paths{"/qkt/w/lock"});
    CHECK(paths_with(p.rec, kProbe) == Paths{"/qkt/w/rel/x.h"});
    // O_DIRECTORY, or a directory found by stat when the flags do not say.
    CHECK(paths_with(p.rec, kList) == Paths{"/qkt/w/src", "/usr"});
    CHECK(p.rec.complete());
}

TEST_CASE("strace: opens, execs and changes refused with EACCES or EPERM are denials when asked, no other failure",
          "[record][strace]")
{
    std::initializer_list<std::string_view> lines = {
        R"(100   openat(AT_FDCWD</qkt/w>, "secret", O_RDONLY|O_CLOEXEC) = -1 EACCES (Permission denied))",
        R"(100   open("/qkt/w/ro", O_WRONLY|O_TRUNC) = -1 EACCES (Permission denied))",
        R"(100   openat(AT_FDCWD</qkt/w>, "mine", O_RDONLY|O_NOATIME) = -1 EPERM (Operation not permitted))",
        R"(100   openat(3</qkt/w/sub>, "x", O_RDONLY) = -1 EACCES (Permission denied))",
        R"(100   openat2(AT_FDCWD</qkt/w>, "two", {flags=O_RDONLY, resolve=0}, 24) = -1 EACCES (Permission denied))",
        R"(100   creat("made", 0644) = -1 EACCES (Permission denied))",
        R"(100   openat(AT_FDCWD</qkt/w>, "rel/x.h", O_RDONLY) = -1 ENOENT (No such file or directory))",
        R"(100   openat(AT_FDCWD</qkt/w>, "handle", O_RDONLY|O_PATH) = -1 EACCES (Permission denied))",
        R"(100   openat(AT_FDCWD</qkt/w>, "tmp", O_WRONLY|O_TMPFILE, 0600) = -1 EACCES (Permission denied))",
        R"(100   openat(AT_FDCWD</qkt/w>, "dir", O_WRONLY) = -1 EISDIR (Is a directory))",
        R"(100   openat(AT_FDCWD</qkt/w>, "lock", O_RDWR|O_CREAT|O_EXCL, 0600) = -1 EEXIST (File exists))",
        R"(100   openat(AT_FDCWD</qkt/w>, "loop", O_RDONLY|O_NOFOLLOW) = -1 ELOOP (Too many levels of symbolic links))",
        R"(100   mkdir("/qkt/w/md", 0777) = -1 EACCES (Permission denied))",
        R"(100   unlink("/qkt/w/kept") = -1 EPERM (Operation not permitted))",
        R"(100   rename("/qkt/w/a", "/qkt/w/b") = -1 EACCES (Permission denied))",
        R"(100   truncate("/qkt/w/t", 0) = -1 EACCES (Permission denied))",
        R"(100   rmdir("/qkt/w/full") = -1 ENOTEMPTY (Directory not empty))",
        R"(100   mkdir("/qkt/w/there", 0777) = -1 EEXIST (File exists))",
        R"(100   clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 101)",
        R"(101   execve("/qkt/bin/noexec", ["noexec"], 0x7ffc /* 3 vars */) = -1 EACCES (Permission denied))",
        R"(101   execveat(AT_FDCWD</qkt/w>, "tool", ["tool"], 0x7ffc /* 3 vars */, 0) = -1 EPERM (Operation not permitted))",
        R"(101   execve("/qkt/bin/elf", ["elf"], 0x7ffc /* 3 vars */) = -1 ENOEXEC (Exec format error))",
        R"(101   execve("/qkt/bin/nope", ["nope"], 0x7ffc /* 3 vars */) = -1 ENOENT (No such file or directory))",
        R"(101   +++ exited with 1 +++)",
        R"(100   +++ exited with 0 +++)",
    };
    const Paths denied = {"/qkt/bin/noexec", "/qkt/w/a",      "/qkt/w/b",      "/qkt/w/kept", "/qkt/w/made",
                          "/qkt/w/md",       "/qkt/w/mine",   "/qkt/w/ro",     "/qkt/w/secret", "/qkt/w/sub/x",
                          "/qkt/w/t",        "/qkt/w/tool",   "/qkt/w/two"};
    const Paths probed = {"/qkt/bin/nope", "/qkt/w/rel/x.h"};
    for (bool denials : {true, false}) {
        INFO("denials " << denials);
        auto p = parse(lines, "/qkt/w", 0, denials);
        CHECK(p.errors.empty());
        CHECK(paths_with(p.rec, kDenied) == (denials ? denied : Paths{}));
        CHECK(paths_with(p.rec, kProbe) == probed);
        CHECK(p.rec.paths().size() == probed.size() + (denials ? denied.size() : 0));
        CHECK(p.rec.renames().empty());
        CHECK(p.rec.complete());
    }
}

TEST_CASE("strace --pidns-translation: a child forked in a PID namespace meets its lines", "[record][strace]")
{
    // Enforce runs the task in a PID namespace: clone returns the child's pid there (2), and strace
    // adds the pid every later line names it by (14734).
    auto p = parse({
        R"(14733 execve("/bin/sh", ["sh", "-c", "cat x"], 0x7ffc /* 3 vars */) = 0)",
        R"(14733 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 2 /* 14734 in strace's PID NS */)",
        R"(14734 execve("/bin/cat", ["cat", "x"], 0x7ffc /* 3 vars */) = 0)",
        R"(14734 openat(AT_FDCWD</qkt/w>, "x", O_RDONLY) = 3</qkt/w/x>)",
        R"(14734 +++ exited with 0 +++)",
        R"(14733 +++ exited with 0 +++)",
    });
    CHECK(p.errors.empty());
    CHECK(p.rec.processes().at(14734).ppid == 14733);
    CHECK(p.rec.command_chain(p.rec.first_pid("/qkt/w/x")) == Paths{"cat x", "sh -c cat x"});
    CHECK_FALSE(p.rec.processes().contains(2));
    CHECK(strace::parse_return("2 /* 14734 in strace's PID NS */")->value == 14734);
    CHECK_FALSE(strace::parse_return("2 /* x in strace's PID NS */"));
}

TEST_CASE("strace: a process killed in execve before its return is named by it, and reads nothing",
          "[record][strace]")
{
    // The leftover daemon: its parent saw the exec take (a close-on-exec pipe closed) and the run ended
    // and killed it before strace printed execve's return.
    auto p = parse({
        R"(100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 101)",
        R"(101 execve("/qkt/bin/sleep", ["sleep", "300"], 0x7ffc /* 3 vars */ <unfinished ...>)",
        R"(100 +++ exited with 0 +++)",
        R"(101 +++ killed by SIGKILL +++)",
    });
    CHECK(p.errors.empty());
    CHECK(p.rec.processes().at(101).argv == Paths{"sleep", "300"});
    CHECK(p.rec.processes().at(101).signal == SIGKILL);
    CHECK(paths_with(p.rec, kRead).empty());
}

TEST_CASE("strace -X raw constants decode like the symbolic ones", "[record][strace]")
{
    auto p = parse({
        R"(100 openat(-100</qkt/w>, "a", 0x80000) = 3</qkt/w/a>)",
        R"(100 openat(-100</qkt/w>, "b", 0x241, 0644) = 4</qkt/w/b>)",
        R"(100 openat(-100</qkt/w>, "c", 0xc2, 0600) = 5</qkt/w/c>)",
        R"(100 openat(-100</qkt/w>, "d", 0x10000) = 6</qkt/w/d>)",
        R"(100 openat2(3</qkt/w/a>, "e", {flags=0x80000, resolve=0}, 24) = -1 ENOENT (No such file or directory))",
        R"(100 unlinkat(-100</qkt/w>, "dir", 0x200) = 0)",
        R"(100 renameat2(-100</qkt/w>, "x", -100</qkt/w>, "y", 0x2) = 0)",
        R"(100 clone(child_stack=NULL, flags=0x3d0f00|17, child_tidptr=0x7f) = 101)",
        R"(101 openat(-100</qkt/w>, "t", 0) = 3</qkt/w/t>)",
    });
    CHECK(p.errors.empty());
    CHECK(paths_with(p.rec, kRead) == Paths{"/qkt/w/a", "/qkt/w/c", "/qkt/w/t"});
    CHECK(paths_with(p.rec, kWrite) == Paths{"/qkt/w/b", "/qkt/w/c"});
    CHECK(paths_with(p.rec, kCreate) == Paths{"/qkt/w/c"});
    CHECK(paths_with(p.rec, kList) == Paths{"/qkt/w/d"});
    CHECK(paths_with(p.rec, kProbe) == Paths{"/qkt/w/a/e"});
    CHECK(paths_with(p.rec, kRemove) == Paths{"/qkt/w/dir"});
    using Rename = std::pair<std::string, std::string>;
    CHECK(p.rec.renames() == std::set<Rename>{{"/qkt/w/x", "/qkt/w/y"}, {"/qkt/w/y", "/qkt/w/x"}});
    // 0x3d0f00 holds CLONE_THREAD: 101 is a thread of 100, not a process.
    CHECK(p.rec.processes().count(101) == 0);
}

TEST_CASE("strace paths keep every byte: newline, quote, space, backslash, non-ASCII", "[record][strace]")
{
    auto p = parse({
        R"(100 openat(3</qkt/d\74x\76>, "a\nb\"c d\351\\", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4</qkt/d\74x\76/a\nb\"c d\351\\>)",
        R"(100 openat(AT_FDCWD</qkt/w>, "tab\there", O_RDONLY) = -1 ENOENT (No such file or directory))",
    });
    CHECK(p.errors.empty());
    CHECK(paths_with(p.rec, kWrite) == Paths{"/qkt/d<x>/a\nb\"c d\xe9\\"});
    CHECK(paths_with(p.rec, kProbe) == Paths{"/qkt/w/tab\there"});
}

TEST_CASE("strace paths strace cut, or too long once joined, make the recording incomplete", "[record][strace]")
{
    std::string dir = "/qkt/" + std::string(4000, 'd');
    std::string cut = R"(100 openat(AT_FDCWD</qkt/w>, "/)" + std::string(4094, 'a') + R"("..., O_RDONLY) = -1 ENAMETOOLONG (File name too long))";
    std::string cut_probe = R"(100 open("/)" + std::string(4094, 'b') + R"("..., O_RDONLY) = -1 ENOENT (No such file or directory))";
    std::string joined = "100 openat(AT_FDCWD<" + dir + ">, \"" + std::string(100, 'f') +
                         "\", O_RDONLY) = -1 ENOENT (No such file or directory)";
    {
        auto p = parse({cut});
        CHECK(p.errors.empty());
        CHECK(p.rec.complete());  // nothing is recorded of a failure other than ENOENT
    }
    {
        auto p = parse({cut_probe});
        CHECK(p.rec.incomplete_reasons() == Paths{kTooLong});
    }
    {
        auto p = parse({joined});
        CHECK(p.errors.empty());
        CHECK(paths_with(p.rec, kProbe).empty());
        CHECK(p.rec.incomplete_reasons() == Paths{kTooLong});
    }
}

TEST_CASE("strace renames, removals, directories, links, symlinks, truncation", "[record][strace]")
{
    auto p = parse({
        R"(100 rename("a", "b") = 0)",
        R"(100 renameat(3</qkt/d>, "c", AT_FDCWD</qkt/w>, "/qkt/e") = 0)",
        R"(100 renameat2(AT_FDCWD</qkt/w>, "x", 3</qkt/d>, "y", RENAME_EXCHANGE) = 0)",
        R"(100 renameat2(AT_FDCWD</qkt/w>, "n", AT_FDCWD</qkt/w>, "m", RENAME_NOREPLACE) = -1 EEXIST (File exists))",
        R"(100 unlink("gone") = 0)",
        R"(100 unlinkat(3</qkt/d>, "gone2", 0) = 0)",
        R"(100 unlinkat(3</qkt/d>, "olddir", AT_REMOVEDIR) = 0)",
        R"(100 rmdir("/qkt/w/olddir2") = 0)",
        R"(100 mkdir("newdir", 0755) = 0)",
        R"(100 mkdirat(3</qkt/d>, "newdir2", 0700) = 0)",
        R"(100 mkdir("exists", 0755) = -1 EEXIST (File exists))",
        R"(100 link("src", "hard") = 0)",
        R"(100 linkat(AT_FDCWD</qkt/w>, "src", 3</qkt/d>, "hard2", 0) = 0)",
        R"(100 linkat(5</tmp/#123 (deleted)>, "", AT_FDCWD</qkt/w>, "/x", AT_EMPTY_PATH) = 0)",
        R"(100 symlink("target", "sym") = 0)",
        R"(100 symlinkat("../t2", 3</qkt/d>, "sym2") = 0)",
        R"(100 truncate("trunc", 0) = 0)",
        R"(100 ftruncate(4</qkt/w/ftrunc>, 10) = 0)",
        R"(100 ftruncate(4</qkt/w/gone>(deleted), 10) = -1 EINVAL (Invalid argument))",
    });
    CHECK(p.errors.empty());
    using Rename = std::pair<std::string, std::string>;
    CHECK(p.rec.renames() == std::set<Rename>{{"/qkt/w/a", "/qkt/w/b"},
                                              {"/qkt/d/c", "/qkt/e"},
                                              {"/qkt/w/x", "/qkt/d/y"},
                                              {"/qkt/d/y", "/qkt/w/x"}});
    CHECK(paths_with(p.rec, kRemove) == Paths{"/qkt/d/gone2", "/qkt/d/olddir", "/qkt/w/gone", "/qkt/w/olddir2"});
    CHECK(paths_with(p.rec, kCreate) ==
          Paths{"/qkt/d/hard2", "/qkt/d/newdir2", "/qkt/d/sym2", "/qkt/w/hard", "/qkt/w/newdir", "/qkt/w/sym", "/x"});
    CHECK(paths_with(p.rec, kWrite) == Paths{"/qkt/w/ftrunc", "/qkt/w/trunc"});
    CHECK(paths_with(p.rec, kRead).empty());
    CHECK(p.rec.complete());
}

TEST_CASE("strace processes: forks, execs, exit codes and signals", "[record][strace]")
{
    auto p = parse({
        R"(100 execve("/qkt/bin/sh", ["sh", "-c", "a b\nc"], 0x7ffc /* 37 vars */) = 0)",
        R"(100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 101)",
        R"(100 fork() = 102)",
        R"(100 clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x7f, stack_size=0x9000}, 88) = 103)",
        R"(101 execve("/qkt/missing", ["missing"], 0x7ffc /* 3 vars */) = -1 ENOENT (No such file or directory))",
        R"(101 execve("/qkt/noexec", ["noexec"], 0x7ffc /* 3 vars */) = -1 EACCES (Permission denied))",
        R"(101 execve("tool", ["tool", "x"...], 0x7ffc /* 3 vars */) = 0)",
        R"(101 +++ exited with 3 +++)",
        R"(102 +++ killed by SIGKILL +++)",
        R"(103 +++ killed by SIGSEGV (core dumped) +++)",
        R"(100 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=101, si_uid=0, si_status=3} ---)",
        R"(100 +++ exited with 7 +++)",
    });
    CHECK(p.errors.empty());
    const auto& procs = p.rec.processes();
    REQUIRE(procs.size() == 4);
    CHECK(procs.at(100).argv == Paths{"sh", "-c", "a b\nc"});
    CHECK(procs.at(100).exit_code == 7);
    CHECK(procs.at(101).ppid == 100);
    CHECK(procs.at(101).argv == Paths{"tool", "x"});
    CHECK(procs.at(101).exit_code == 3);
    CHECK(procs.at(102).ppid == 100);
    CHECK(procs.at(102).signal == 9);
    CHECK(procs.at(103).signal == 11);
    CHECK_FALSE(procs.at(103).exit_code);
    REQUIRE(p.root_status);
    CHECK(WIFEXITED(*p.root_status));
    CHECK(WEXITSTATUS(*p.root_status) == 7);
    // Execs are reads of the file exec'd (relative to the cwd); a missing one is a probe.
    CHECK(paths_with(p.rec, kRead) == Paths{"/qkt/bin/sh", "/qkt/w/tool"});
    CHECK(paths_with(p.rec, kProbe) == Paths{"/qkt/missing"});
}

TEST_CASE("strace: a root whose exec failed never ran the command", "[record][strace]")
{
    Recording rec;
    RecordingSink sink(rec);
    StraceParser parser(sink, "/qkt/w");
    CHECK(parser.feed(R"(60 execve("/qkt/x", ["/qkt/x"], 0x1 /* 1 var */) = -1 ENOEXEC (Exec format error))"));
    CHECK(parser.feed("60 +++ exited with 1 +++"));
    CHECK(parser.root_exec_failure() == ENOEXEC);

    StraceParser ran(sink, "/qkt/w");
    CHECK(ran.feed(R"(61 execve("/qkt/x", ["/qkt/x"], 0x1 /* 1 var */) = 0)"));
    CHECK(ran.feed(R"(61 execve("/qkt/y", ["/qkt/y"], 0x1 /* 1 var */) = -1 ENOENT (No such file or directory))"));
    CHECK_FALSE(ran.root_exec_failure());
}

TEST_CASE("strace: a killed root gives a signal wait status", "[record][strace]")
{
    auto p = parse({R"(50 execve("/bin/sh", ["sh"], 0x1 /* 1 var */) = 0)", "50 +++ killed by SIGKILL +++"});
    REQUIRE(p.root_status);
    CHECK(WIFSIGNALED(*p.root_status));
    CHECK(WTERMSIG(*p.root_status) == 9);
    auto core = parse({"50 +++ killed by SIGABRT (core dumped) +++"});
    CHECK(WTERMSIG(*core.root_status) == 6);
    CHECK(WCOREDUMP(*core.root_status));
}

TEST_CASE("strace unfinished calls resume per pid across interleaved lines", "[record][strace]")
{
    auto p = parse({
        R"(200 vfork( <unfinished ...>)",
        R"(201 execve("/qkt/bin/sh", ["sh", "-c", "exit 5"], 0x7ffe /* 37 vars */ <unfinished ...>)",
        R"(200 <... vfork resumed>)              = 201)",
        R"(200 openat(AT_FDCWD</qkt/w>, "mine", O_RDONLY <unfinished ...>)",
        R"(201 <... execve resumed>)             = 0)",
        R"(201 openat(AT_FDCWD</qkt/w>, "child", O_RDONLY) = 3</qkt/w/child>)",
        R"(200 <... openat resumed>)             = 4</qkt/w/mine>)",
        R"(201 +++ exited with 5 +++)",
        R"(200 +++ exited with 0 +++)",
    });
    CHECK(p.errors.empty());
    CHECK(paths_with(p.rec, kRead) == Paths{"/qkt/bin/sh", "/qkt/w/child", "/qkt/w/mine"});
    CHECK(p.rec.processes().at(201).ppid == 200);
    CHECK(p.rec.processes().at(201).argv == Paths{"sh", "-c", "exit 5"});
    CHECK(p.rec.processes().at(201).exit_code == 5);
}

TEST_CASE("strace: a child's lines before its parent's fork returned wait for it, and inherit its cwd",
          "[record][strace]")
{
    auto p = parse({
        R"(300 chdir("sub") = 0)",
        R"(300 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD <unfinished ...>)",
        R"(301 open("rel", O_RDONLY) = -1 ENOENT (No such file or directory))",
        R"(301 execve("tool", ["tool"], 0x7ffc /* 3 vars */ <unfinished ...>)",
        R"(300 <... clone resumed>, child_tidptr=0x7f) = 301)",
        R"(301 <... execve resumed>) = 0)",
        R"(301 chdir("/qkt/other") = 0)",
        R"(301 open("x", O_RDONLY) = 3</qkt/other/x>)",
        R"(300 open("y", O_RDONLY) = -1 ENOENT (No such file or directory))",
        R"(301 fchdir(5</qkt/third>) = 0)",
        R"(301 mkdir("z", 0755) = 0)",
    });
    CHECK(p.errors.empty());
    CHECK(paths_with(p.rec, kProbe) == Paths{"/qkt/w/sub/rel", "/qkt/w/sub/y"});
    CHECK(paths_with(p.rec, kRead) == Paths{"/qkt/other/x", "/qkt/w/sub/tool"});
    CHECK(paths_with(p.rec, kCreate) == Paths{"/qkt/third/z"});
    CHECK(p.rec.processes().at(301).ppid == 300);
    CHECK(p.rec.complete());
}

TEST_CASE("strace: threads are their process; a thread's exec continues in the leader", "[record][strace]")
{
    auto p = parse({
        R"(400 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, child_tid=0x7f, exit_signal=0} => {parent_tid=[401]}, 88) = 401)",
        R"(401 chdir("/qkt/t") = 0)",
        R"(401 openat(AT_FDCWD</qkt/t>, "/etc/passwd", O_RDONLY) = 4</etc/passwd>)",
        R"(400 open("shared-cwd", O_RDONLY) = -1 ENOENT (No such file or directory))",
        R"(401 +++ exited with 0 +++)",
        R"(400 clone3({flags=CLONE_VM|CLONE_FS|CLONE_THREAD|CLONE_SIGHAND, exit_signal=0}, 88) = 402)",
        R"(402 execve("/qkt/bin/true", ["true"], 0x7ffc /* 37 vars */ <pid changed to 400 ...>)",
        R"(400 +++ superseded by execve in pid 402 +++)",
        R"(400 <... execve resumed>) = 0)",
        R"(400 +++ exited with 0 +++)",
    });
    CHECK(p.errors.empty());
    CHECK(p.rec.processes().size() == 1);
    CHECK(p.rec.processes().at(400).argv == Paths{"true"});
    CHECK(p.rec.processes().at(400).exit_code == 0);
    CHECK(paths_with(p.rec, kRead) == Paths{"/etc/passwd", "/qkt/bin/true"});
    // CLONE_FS: the thread's chdir moved the whole process.
    CHECK(paths_with(p.rec, kProbe) == Paths{"/qkt/t/shared-cwd"});
}

TEST_CASE("strace lines without a pid belong to the root, or the only task", "[record][strace]")
{
    auto p = parse(
        {
            R"(execve("/qkt/bin/sh", ["sh"], 0x7ffd /* 37 vars */) = 0)",
            R"(vfork( <unfinished ...>)",
            R"([pid  11] execve("/qkt/bin/true", ["/qkt/bin/true"], 0x5566 /* 37 vars */ <unfinished ...>)",
            R"([pid  10] <... vfork resumed>)        = 11)",
            R"([pid  11] <... execve resumed>)       = 0)",
            R"([pid  11] +++ exited with 0 +++)",
            R"(--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=11, si_uid=0, si_status=0} ---)",
            R"(openat(AT_FDCWD</qkt/w>, "last", O_RDONLY) = 3</qkt/w/last>)",
            R"(+++ exited with 4 +++)",
        },
        "/qkt/w", 10);
    CHECK(p.errors.empty());
    CHECK(p.rec.processes().at(11).ppid == 10);
    CHECK(paths_with(p.rec, kRead) == Paths{"/qkt/bin/sh", "/qkt/bin/true", "/qkt/w/last"});
    REQUIRE(p.root_status);
    CHECK(WEXITSTATUS(*p.root_status) == 4);

    auto unknown = parse({R"(openat(AT_FDCWD</qkt/w>, "x", O_RDONLY) = 3</qkt/w/x>)"});
    REQUIRE(unknown.errors.size() == 1);
    CHECK_THAT(unknown.errors[0], Catch::Contains("line 1"));
}

TEST_CASE("strace noise is skipped: signals, attach messages, calls not decoded", "[record][strace]")
{
    auto p = parse({
        R"(strace: Process 500 attached)",
        R"(500 [ Process PID=500 runs in 32 bit mode. ])",
        R"(500 read(3, "\177ELF\2\1\1"..., 832) = 832)",
        R"(500 newfstatat(AT_FDCWD</qkt/w>, "x", {st_mode=S_IFREG|0644, st_size=3, ...}, 0) = 0)",
        R"(500 wait4(-1,  <unfinished ...>)",
        R"(500 <... wait4 resumed>[{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 501)",
        R"(500 exit_group(0)                     = ?)",
        R"(500 --- SIGINT {si_signo=SIGINT, si_code=SI_USER, si_pid=1, si_uid=0} ---)",
        R"(500 openat(AT_FDCWD</qkt/w>, "f", O_RDONLY <unfinished ...>)",
        R"(500 <... openat resumed>)             = ?)",
        R"(500 +++ exited with 0 +++)",
    });
    CHECK(p.errors.empty());
    CHECK(p.rec.paths().empty());
    CHECK(p.rec.complete());
}

TEST_CASE("strace io_uring_setup makes the recording incomplete", "[record][strace]")
{
    auto p = parse({R"(600 io_uring_setup(4, {flags=0, sq_thread_cpu=0, sq_entries=4, cq_entries=8, features=IORING_FEAT_SINGLE_MMAP}) = 3<anon_inode:[io_uring]>)"});
    CHECK(p.errors.empty());
    CHECK(p.rec.incomplete_reasons() == Paths{"io_uring in use: its file operations are invisible to strace"});
    auto failed = parse({R"(600 io_uring_setup(4, 0x7ffd) = -1 ENOSYS (Function not implemented))"});
    CHECK(failed.rec.complete());
}

TEST_CASE("strace garbage lines are errors naming the line; the parser goes on", "[record][strace]")
{
    auto p = parse({
        R"(700 openat(AT_FDCWD</qkt/w>, "a", O_RDONLY) = 3</qkt/w/a>)",
        R"(this is not strace)",
        R"(700 openat(AT_FDCWD</qkt/w>, "b", O_BOGUS) = 3</qkt/w/b>)",
        R"(700 openat(AT_FDCWD</qkt/w>, "c", O_RDONLY)",
        R"(700 openat(AT_FDCWD</qkt/w>, c, O_RDONLY) = 3</qkt/w/c>)",
        R"(700 <... openat resumed>) = 3)",
        R"(700 +++ exploded +++)",
        "700 openat(AT_FDCWD</qkt/w>, \"\\",
        R"(700 openat(AT_FDCWD</qkt/w>, "d", O_RDONLY) = 3</qkt/w/d>)",
        R"(700 +++ exited with 2 +++)",
    });
    REQUIRE(p.errors.size() == 7);
    CHECK_THAT(p.errors[0], Catch::Contains("line 2") && Catch::Contains("this is not strace"));
    CHECK_THAT(p.errors[1], Catch::Contains("line 3") && Catch::Contains("O_BOGUS"));
    CHECK_THAT(p.errors[2], Catch::Contains("line 4"));
    CHECK_THAT(p.errors[3], Catch::Contains("line 5"));
    CHECK_THAT(p.errors[4], Catch::Contains("line 6") && Catch::Contains("no unfinished openat"));
    CHECK_THAT(p.errors[5], Catch::Contains("line 7"));
    CHECK_THAT(p.errors[6], Catch::Contains("line 8"));
    CHECK(paths_with(p.rec, kRead) == Paths{"/qkt/w/a", "/qkt/w/d"});
    REQUIRE(p.root_status);
    CHECK(WEXITSTATUS(*p.root_status) == 2);
}

TEST_CASE("strace: a relative path against an fd strace did not name is not guessed", "[record][strace]")
{
    auto p = parse({R"(800 openat(5, "x", O_RDONLY) = 3</qkt/x>)", R"(800 openat(5, "/abs", O_RDONLY) = 4</abs>)"});
    CHECK(p.errors.empty());
    CHECK(paths_with(p.rec, kRead) == Paths{"/abs"});
    CHECK(p.rec.incomplete_reasons() == Paths{"strace did not show the directory a relative path was resolved in"});
}

// Recorded here with strace 6.1 from a program making each traced call (under /tmp/qk-fx, gone now).
TEST_CASE("strace 6.1 output of the syscall program, symbolic and -X raw, records the same", "[record][strace]")
{
    const std::string d = "/tmp/qk-fx/d/";
    const std::string odd = d + "a\nb\"c d\xe9\\";
    for (const char* file : {"syscalls-symbolic.txt", "syscalls-raw.txt"}) {
        INFO(file);
        auto p = parse_file(file);
        CHECK(p.errors.empty());
        Paths read = {real("/bin/sh"), real("/bin/true"), real("/etc/hostname"), "/etc/ld.so.cache", "/etc/passwd",
                      odd, d + "x", d + "y", "/tmp/qk-fx/t", "/usr/lib/x86_64-linux-gnu/libc.so.6"};
        std::sort(read.begin(), read.end());
        CHECK(paths_with(p.rec, kRead) == read);
        // ftruncate through the O_TMPFILE fd names the inode "#<ino>" (a different one in each file).
        Paths written = paths_with(p.rec, kWrite);
        std::erase_if(written, [](const std::string& path) { return path.starts_with("/tmp/qk-fx/d/#"); });
        Paths expected_written = {odd, d + "x", d + "y", d + "z"};
        std::sort(expected_written.begin(), expected_written.end());
        CHECK(written == expected_written);
        CHECK(paths_with(p.rec, kCreate) ==
              Paths{"/tmp/qk-fx/d", d + "lnk", d + "lnk2", d + "sub", d + "sub2", d + "tmpf", d + "x", d + "y2"});
        CHECK(paths_with(p.rec, kRemove) ==
              Paths{d + "lnk", d + "lnk2", d + "sub", d + "sub2", d + "tmpf", d + "y", d + "y2", d + "z"});
        CHECK(paths_with(p.rec, kList) == Paths{"/", "/tmp/qk-fx/d"});
        CHECK(paths_with(p.rec, kProbe) == Paths{"/nonexist", "/nonexistent", d + "rel"});
        using Rename = std::pair<std::string, std::string>;
        CHECK(p.rec.renames() == std::set<Rename>{{d + "x", d + "y"}, {d + "y", d + "x"}, {d + "x", d + "z"}});
        CHECK(p.rec.incomplete_reasons() == Paths{"io_uring in use: its file operations are invisible to strace"});
        const auto& procs = p.rec.processes();
        REQUIRE(procs.size() == 4);  // the root, two forks and a vfork; the thread is not a process
        auto child = std::next(procs.begin());
        CHECK(child->second.argv == Paths{"true", "a b", "c\nd"});
        CHECK(std::prev(procs.end())->second.signal == 9);
        REQUIRE(p.root_status);
        CHECK(WEXITSTATUS(*p.root_status) == 7);
    }
}

TEST_CASE("strace 6.1 output of a thread's exec", "[record][strace]")
{
    auto p = parse_file("thread-exec.txt");
    CHECK(p.errors.empty());
    CHECK(p.rec.processes().size() == 1);
    CHECK(paths_with(p.rec, kWrite) == Paths{"/tmp/qk-fx/w<e>i,r(d)\" x"});
    CHECK(paths_with(p.rec, kRemove) == Paths{"/tmp/qk-fx/w<e>i,r(d)\" x"});
    // An O_RDONLY open of a directory is a listing only if the directory still exists when parsed:
    // /tmp/qk-fx is gone, so here it reads as a file.
    Paths read = {real("/bin/true"), "/etc/ld.so.cache", "/tmp/qk-fx", "/tmp/qk-fx/te",
                  "/usr/lib/x86_64-linux-gnu/libc.so.6"};
    std::sort(read.begin(), read.end());
    CHECK(paths_with(p.rec, kRead) == read);
}

TEST_CASE("strace trace list names every decoded call", "[record][strace]")
{
    std::string list(StraceParser::traced_syscalls());
    for (const char* name : {"open", "openat", "openat2", "creat", "rename", "renameat", "renameat2", "unlink",
                             "unlinkat", "rmdir", "mkdir", "mkdirat", "link", "linkat", "symlink", "symlinkat",
                             "truncate", "ftruncate", "chdir", "fchdir", "execve", "execveat", "fork", "vfork", "clone",
                             "clone3", "io_uring_setup"})
        CHECK_THAT("," + list + ",", Catch::Contains(std::string(",") + name + ","));
}

TEST_CASE("strace: a renamed cwd moves the process's relative names with it", "[record][strace]")
{
    auto p = parse({
        R"(900 chdir("/qkt/w/sub") = 0)",
        R"(900 rename("/qkt/w/sub", "/qkt/w/moved") = 0)",
        R"(900 mkdir("n", 0755) = 0)",
        R"(900 renameat2(AT_FDCWD</qkt/w/moved>, "/qkt/w", AT_FDCWD</qkt/w/moved>, "/qkt/v", RENAME_EXCHANGE) = 0)",
        R"(900 unlink("gone") = 0)",
    });
    CHECK(p.errors.empty());
    CHECK(paths_with(p.rec, kCreate) == Paths{"/qkt/w/moved/n"});
    CHECK(paths_with(p.rec, kRemove) == Paths{"/qkt/v/moved/gone"});
}

TEST_CASE("strace: a #! script's process runs its interpreter, as the kernel builds argv", "[record][strace]")
{
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("qk-strace-argv-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "s.sh") << "#!/qkt/bin/interp  -x -y \t\nexit 0\n";
    std::ofstream(dir / "plain.sh") << "#! /qkt/bin/sh\n";
    std::string d = dir.string();
    auto p = parse(
        {
            ("1000 execve(\"s.sh\", [\"s.sh\", \"a\", \"b\"], 0x7ffc /* 3 vars */) = 0"),
            ("1000 execve(\"" + d + "/plain.sh\", [\"whatever\"], 0x7ffc /* 3 vars */) = 0"),
        },
        d);
    CHECK(p.errors.empty());
    // One optional argument, blanks around it trimmed; argv[0] replaced by the name as passed.
    CHECK(p.rec.processes().at(1000).argv == Paths{"/qkt/bin/sh", d + "/plain.sh"});
    auto first = parse({"1000 execve(\"s.sh\", [\"s.sh\", \"a\", \"b\"], 0x7ffc /* 3 vars */) = 0"}, d);
    CHECK(first.rec.processes().at(1000).argv == Paths{"/qkt/bin/interp", "-x -y", "s.sh", "a", "b"});
    fs::remove_all(dir);
}

TEST_CASE("strace: mknod creates; mounts that make aliases make the recording incomplete, others not",
          "[record][strace]")
{
    auto quiet = parse({
        R"(100   mknod("/qkt/w/made", S_IFREG|0644) = 0)",
        R"(100   mknodat(AT_FDCWD</qkt/w>, "fifo", S_IFIFO|0600) = 0)",
        // what `unshare -m` does first: a propagation change, no new path
        R"(100   mount("none", "/", NULL, MS_REC|MS_PRIVATE, NULL) = 0)",
        R"(100   mount(NULL, "/qkt/w/ro", NULL, MS_REMOUNT|MS_BIND|MS_RDONLY, NULL) = 0)",
        R"(100   setns(5</proc/1/ns/net>, CLONE_NEWNET) = 0)",
        R"(100   open_tree(AT_FDCWD</qkt/w>, "src", OPEN_TREE_CLOEXEC) = 6</qkt/w/src>)",
        R"(100   mount("src", "alias", NULL, MS_BIND, NULL) = -1 EPERM (Operation not permitted))",
        R"(100   +++ exited with 0 +++)",
    });
    CHECK(quiet.errors.empty());
    CHECK(paths_with(quiet.rec, kCreate) == Paths{"/qkt/w/fifo", "/qkt/w/made"});
    CHECK(quiet.rec.incomplete_reasons() == Paths{});

    for (std::string_view line : {
             R"(100   mount("src", "alias", NULL, MS_BIND, NULL) = 0)",
             R"(100   mount("tmpfs", "/qkt/w/dist", "tmpfs", 0, NULL) = 0)",
             R"(100   setns(5</proc/1/ns/mnt>, 0) = 0)",
             R"(100   setns(5</proc/1/ns/mnt>, CLONE_NEWNS) = 0)",
             R"(100   pivot_root(".", "old") = 0)",
             R"(100   open_tree(AT_FDCWD</qkt/w>, "src", OPEN_TREE_CLONE|AT_RECURSIVE) = 6<anon_inode:[mount]>)",
             R"(100   move_mount(6<anon_inode:[mount]>, "", AT_FDCWD</qkt/w>, "alias", MOVE_MOUNT_F_EMPTY_PATH) = 0)",
             R"(100   fsmount(7<anon_inode:[fscontext]>, FSMOUNT_CLOEXEC, 0) = 8<anon_inode:[mount]>)",
         }) {
        INFO(line);
        auto p = parse({line, R"(100   +++ exited with 0 +++)"});
        CHECK(p.errors.empty());
        REQUIRE(p.rec.incomplete_reasons().size() == 1);
        CHECK(p.rec.incomplete_reasons()[0].starts_with("process 100 called "));
    }
}

TEST_CASE("strace: a chroot makes the recording incomplete; an open by handle is read at its fd's path",
          "[record][strace]")
{
    auto p = parse({
        R"(100   open_by_handle_at(3</qkt/w>, {handle_bytes=8, handle_type=1, f_handle="\x01\x02"}, O_RDONLY) = 4</qkt/w/h.txt>)",
        R"(100   chroot("/") = 0)",
        R"(100   +++ exited with 0 +++)",
    });
    CHECK(p.errors.empty());
    CHECK(paths_with(p.rec, kRead) == Paths{"/qkt/w/h.txt"});
    CHECK(p.rec.complete());

    auto jailed = parse({R"(100   chroot("jail") = 0)", R"(100   +++ exited with 0 +++)"});
    REQUIRE(jailed.rec.incomplete_reasons().size() == 1);
    CHECK(jailed.rec.incomplete_reasons()[0].find("changed its root directory (chroot)") != std::string::npos);

    // strace 6 does not name the fd: the handle is opened again, which fails for this made-up one
    auto unnamed = parse({
        R"(100   open_by_handle_at(3</qkt/w>, {handle_bytes=2, handle_type=1, f_handle="\x01\x02"}, O_RDONLY) = 4)",
        R"(100   +++ exited with 0 +++)",
    });
    REQUIRE(unnamed.rec.incomplete_reasons().size() == 1);
    CHECK(unnamed.rec.incomplete_reasons()[0].starts_with("strace did not name the file that open_by_handle_at"));
}
