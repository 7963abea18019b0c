// What each event means, decided once for every engine.
#include <fcntl.h>
#include <linux/fs.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "qk/record/recorder.hpp"
#include "qk/record/recording_sink.hpp"
#include "recording_queries.hpp"
#include "test_support.hpp"

using qk::test::paths_with;

using namespace qk::record;
using Paths = std::vector<std::string>;

namespace {

FsOp open_op(std::string resolved, std::uint32_t flags, long result = 3)
{
    FsOp op;
    op.kind = FsOpKind::open;
    op.pid = 10;
    op.result = result;
    op.flags = flags;
    op.resolved = std::move(resolved);
    op.created_known = true;
    return op;
}

// `pid` exec'ing `file` with `argv`.
ProcExec exec_of(pid_t pid, std::string file, std::vector<std::string> argv)
{
    ProcExec exec;
    exec.pid = pid;
    exec.file = PathArg{"/", std::move(file)};
    exec.argv = std::move(argv);
    return exec;
}

FsOp path_op(FsOpKind kind, std::string name, long result = 0)
{
    FsOp op;
    op.kind = kind;
    op.pid = 10;
    op.result = result;
    op.a = PathArg{"/w", std::move(name)};
    return op;
}

}  // namespace

TEST_CASE("opens are reads, writes, creations or listings by their flags and result", "[record][sink]")
{
    Recording rec;
    RecordingSink sink(rec);
    sink.on_fs(open_op("/w/r", O_RDONLY));
    sink.on_fs(open_op("/w/w", O_WRONLY));
    sink.on_fs(open_op("/w/rw", O_RDWR));
    sink.on_fs(open_op("/w/t", O_RDONLY | O_TRUNC));
    auto created = open_op("/w/c", O_WRONLY | O_CREAT);
    created.created = true;
    sink.on_fs(created);
    auto dir = open_op("/w/d", O_RDONLY | O_DIRECTORY);
    dir.directory = true;
    sink.on_fs(dir);
    sink.on_fs(open_op("/w/p", O_PATH));       // a handle: nothing read
    sink.on_fs(open_op("/w", O_RDWR | O_TMPFILE)); // no name yet
    auto missing = open_op("", O_RDONLY, -ENOENT);
    missing.a = PathArg{"/w", "sub/../missing"};
    sink.on_fs(missing);
    auto denied = open_op("", O_RDONLY, -EACCES);
    denied.a = PathArg{"/w", "secret"};
    sink.on_fs(denied);

    CHECK(paths_with(rec, kRead) == Paths{"/w/r", "/w/rw", "/w/t"});
    CHECK(paths_with(rec, kWrite) == Paths{"/w/c", "/w/rw", "/w/t", "/w/w"});
    CHECK(paths_with(rec, kCreate) == Paths{"/w/c"});
    CHECK(paths_with(rec, kList) == Paths{"/w/d"});
    CHECK(paths_with(rec, kProbe) == Paths{"/w/missing"});
    CHECK(rec.paths().size() == 7);  // neither the O_PATH handle nor the O_TMPFILE inode nor the EACCES
    CHECK(rec.complete());
}

TEST_CASE("namespace operations: rename, exchange, unlink, mkdir, link, symlink, truncate", "[record][sink]")
{
    Recording rec;
    RecordingSink sink(rec);
    auto rename = path_op(FsOpKind::rename, "a");
    rename.b = PathArg{"/w", "b"};
    sink.on_fs(rename);
    auto exchange = path_op(FsOpKind::rename, "x");
    exchange.b = PathArg{"", "/w/y"};
    exchange.flags = RENAME_EXCHANGE;
    sink.on_fs(exchange);
    sink.on_fs(path_op(FsOpKind::unlink, "gone"));
    sink.on_fs(path_op(FsOpKind::rmdir, "dir"));
    sink.on_fs(path_op(FsOpKind::mkdir, "new"));
    auto link = path_op(FsOpKind::link, "src");
    link.b = PathArg{"/w", "hard"};
    sink.on_fs(link);
    sink.on_fs(path_op(FsOpKind::symlink, "soft"));
    sink.on_fs(path_op(FsOpKind::truncate, "trunc"));
    sink.on_fs(path_op(FsOpKind::unlink, "failed", -ENOENT));  // failures other than opens: nothing

    using Pair = std::pair<std::string, std::string>;
    CHECK(rec.renames() == std::set<Pair>{{"/w/a", "/w/b"}, {"/w/x", "/w/y"}, {"/w/y", "/w/x"}});
    CHECK(paths_with(rec, kRemove) == Paths{"/w/dir", "/w/gone"});
    CHECK(paths_with(rec, kCreate) == Paths{"/w/hard", "/w/new", "/w/soft"});
    CHECK(paths_with(rec, kWrite) == Paths{"/w/trunc"});
    CHECK(paths_with(rec, kLinked) == Paths{"/w/src"});  // a hard link's source: neither read nor written
    CHECK(rec.paths().at("/w/src") == kLinked);
    CHECK(rec.paths().count("/w/failed") == 0);
}

TEST_CASE("a hard link's source is linked, followed only under AT_SYMLINK_FOLLOW; one without a name is not",
          "[record][sink]")
{
    qk::test::TempDir dir;
    std::filesystem::create_directories(dir.path / "ws");
    std::ofstream(dir.path / "ws/secret.txt") << "s\n";
    std::filesystem::create_symlink("secret.txt", dir.path / "ws/sl");
    const std::string ws = std::filesystem::canonical(dir.path / "ws").string();
    Recording rec;
    RecordingSink sink(rec);
    auto link = [&](const std::string& base, const std::string& name, std::uint32_t flags, long result = 0) {
        FsOp op;
        op.kind = FsOpKind::link;
        op.pid = 7;
        op.result = result;
        op.flags = flags;
        op.a = PathArg{base, name};
        op.b = PathArg{"", "/tmp/h"};
        sink.on_fs(op);
    };
    link(ws, "sl", AT_SYMLINK_FOLLOW);  // the file the link leads to
    link(ws, "sl", 0);                  // the link itself
    link(ws + "/#1234 (deleted)", "", AT_EMPTY_PATH);  // an O_TMPFILE given a name: links nothing named
    link(ws, "refused.txt", 0, -EXDEV);                // failed: nothing linked
    CHECK(paths_with(rec, kLinked) == Paths{ws + "/secret.txt", ws + "/sl"});
    CHECK(rec.first_pid(ws + "/secret.txt") == 7);  // named beside a finding, as a read's process is
    CHECK(paths_with(rec, kRead).empty());
    CHECK(paths_with(rec, kDenied).empty());  // denials not asked for

    // Refused (Landlock alone; over the overlay EOVERFLOW, a read mask's stand-in): the source is a read
    // refused, the new name a change refused.
    Recording denied;
    RecordingSink keeping(denied);
    keeping.keep_denials();
    for (long refusal : {-EACCES, -EOVERFLOW}) {
        FsOp op;
        op.kind = FsOpKind::link;
        op.result = refusal;
        op.a = PathArg{ws, "secret.txt"};
        op.b = PathArg{ws, refusal == -EACCES ? "h" : "h2"};
        keeping.on_fs(op);
    }
    CHECK(denied.paths().at(ws + "/secret.txt") == kDenied);
    CHECK(denied.paths().at(ws + "/h") == (kDenied | kDeniedChange));
    CHECK(denied.paths().at(ws + "/h2") == (kDenied | kDeniedChange));
    // EXDEV: Landlock refusing a link across its rules (or one out of the overlay's mount): the source was
    // not reached; the new name was no change refused.
    FsOp across;
    across.kind = FsOpKind::link;
    across.result = -EXDEV;
    across.a = PathArg{ws, "sl"};
    across.b = PathArg{ws, "h3"};
    across.flags = AT_SYMLINK_FOLLOW;
    keeping.on_fs(across);
    CHECK(denied.paths().at(ws + "/secret.txt") == kDenied);
    CHECK(denied.paths().count(ws + "/h3") == 0);
    CHECK(denied.paths().size() == 3);
}

TEST_CASE("processes: fork, exec, exit codes and signals", "[record][sink]")
{
    Recording rec;
    RecordingSink sink(rec);
    sink.on_fork(ProcFork{100, 101});
    ProcExec exec;
    exec.pid = 101;
    exec.file = PathArg{"/", "/bin/../bin/true"};
    exec.argv = {"true", "x"};
    sink.on_exec(exec);
    sink.on_exit(ProcExit{101, 3 << 8});
    sink.on_exit(ProcExit{100, 9});
    auto failed = path_op(FsOpKind::exec, "nope", -ENOENT);
    sink.on_fs(failed);

    const auto& p = rec.processes().at(101);
    CHECK(p.ppid == 100);
    CHECK(p.argv == Paths{"true", "x"});
    CHECK(p.exit_code == 3);
    CHECK(!p.signal);
    CHECK(rec.processes().at(100).signal == 9);
    CHECK(paths_with(rec, kProbe) == Paths{"/w/nope"});
    CHECK(paths_with(rec, kRead).size() == 1);  // /bin/true, wherever it resolves to
}

TEST_CASE("the process behind an access: the first that read or wrote it, and its chain of commands",
          "[record][sink]")
{
    Recording rec;
    RecordingSink sink(rec);
    sink.on_exec(exec_of(100, "/bin/sh", {"/bin/sh", "-c", "cat notes.txt > out.txt"}));
    sink.on_fork(ProcFork{100, 101});  // a subshell that never execs: not in the chain
    sink.on_fork(ProcFork{101, 102});
    sink.on_exec(exec_of(102, "/bin/cat", {"cat", "notes.txt"}));
    auto probe = open_op("/w/notes.txt", O_RDONLY, -ENOENT);  // a probe is no access: not the one named
    probe.pid = 100;
    probe.a = PathArg{"/w", "notes.txt"};
    sink.on_fs(probe);
    auto read = open_op("/w/notes.txt", O_RDONLY);
    read.pid = 102;
    sink.on_fs(read);
    auto again = open_op("/w/notes.txt", O_RDONLY);
    again.pid = 100;  // later readers do not replace the first
    sink.on_fs(again);
    auto write = open_op("/w/out.txt", O_WRONLY | O_CREAT);
    write.pid = 101;
    sink.on_fs(write);

    CHECK(rec.first_pid("/w/notes.txt") == 102);
    CHECK(rec.command_chain(102) == Paths{"cat notes.txt", "/bin/sh -c cat notes.txt > out.txt"});
    CHECK(rec.command_chain(rec.first_pid("/w/out.txt")) == Paths{"/bin/sh -c cat notes.txt > out.txt"});
    CHECK(rec.first_pid("/w/elsewhere") == 0);
    CHECK(rec.command_chain(0).empty());

    // A task's commands recorded apart and merged: the first command's process stays the one named.
    Recording later;
    later.add("/w/notes.txt", kRead, 7);
    later.add("/w/new.txt", kWrite, 7);
    rec.merge(later);
    CHECK(rec.first_pid("/w/notes.txt") == 102);
    CHECK(rec.first_pid("/w/new.txt") == 7);
}

TEST_CASE("under enforce a refusal and a probe name their process, and qk's wrapper leaves the chain",
          "[record][sink]")
{
    Recording rec;
    RecordingSink sink(rec);
    sink.keep_only_denials();
    ProcExec wrapper = exec_of(50, "/usr/lib/qk/qk-sandbox-exec",
                               {"qk-sandbox-exec", "plan", "--", "/bin/sh", "-c", "cat secret notes.txt"});
    wrapper.ppid = 1;
    sink.on_exec(wrapper);
    sink.on_fork(ProcFork{50, 51});  // its child in the task's namespaces, which never execs
    sink.on_fork(ProcFork{51, 60});
    sink.on_exec(exec_of(60, "/bin/sh", {"/bin/sh", "-c", "cat secret notes.txt"}));
    sink.on_fork(ProcFork{60, 61});
    sink.on_exec(exec_of(61, "/bin/cat", {"cat", "secret", "notes.txt"}));
    auto denied = open_op("/w/secret", O_RDONLY, -EACCES);
    denied.pid = 61;
    denied.a = PathArg{"/w", "secret"};
    sink.on_fs(denied);
    // Over the overlay's read mask a refused read finds nothing: the probe keeps its process too.
    auto masked = open_op("/w/notes.txt", O_RDONLY, -ENOENT);
    masked.pid = 61;
    masked.a = PathArg{"/w", "notes.txt"};
    sink.on_fs(masked);
    CHECK(rec.first_pid("/w/secret") == 61);
    CHECK(rec.first_pid("/w/notes.txt") == 61);
    const Paths whole{"cat secret notes.txt", "/bin/sh -c cat secret notes.txt",
                      "qk-sandbox-exec plan -- /bin/sh -c cat secret notes.txt"};
    CHECK(rec.command_chain(61) == whole);
    rec.forget_root_commands();
    CHECK(rec.command_chain(61) == Paths{"cat secret notes.txt", "/bin/sh -c cat secret notes.txt"});
}

TEST_CASE("a path too long to hold makes the recording incomplete, never wrong", "[record][sink]")
{
    Recording rec;
    RecordingSink sink(rec);
    auto op = open_op("", O_RDONLY, -ENOENT);
    op.a = PathArg{"/w", "x", true};
    sink.on_fs(op);
    auto long_open = open_op(std::string(5000, 'a'), O_RDONLY);
    sink.on_fs(long_open);
    CHECK(rec.paths().empty());
    CHECK_FALSE(rec.complete());
    REQUIRE(rec.incomplete_reasons().size() == 1);
    CHECK_THAT(rec.incomplete_reasons()[0], Catch::Contains("longer than 4096"));

    ProcExec elf32;
    elf32.pid = 5;
    elf32.resolved = "/w/prog32";
    elf32.elf32 = true;
    sink.on_exec(elf32);
    CHECK(rec.incomplete_reasons().size() == 2);
}

TEST_CASE("refused opens, execs and changes are denials, kept only when asked", "[record][sink]")
{
    // What every engine hands over for a failed call: no kernel path, the path as spelled.
    auto refused = [](FsOpKind kind, std::string name, long result, std::uint32_t flags = O_RDONLY) {
        FsOp op = path_op(kind, std::move(name), result);
        op.flags = flags;
        return op;
    };
    auto feed = [&](RecordingSink& sink) {
        sink.on_fs(refused(FsOpKind::open, "secret", -EACCES));
        sink.on_fs(refused(FsOpKind::open, "sub/../ro", -EACCES, O_WRONLY | O_TRUNC));  // a write refused too
        sink.on_fs(refused(FsOpKind::open, "mine", -EPERM, O_RDONLY | O_NOATIME));
        sink.on_fs(refused(FsOpKind::exec, "noexec", -EACCES));
        sink.on_fs(refused(FsOpKind::exec, "setuid", -EPERM));
        sink.on_fs(refused(FsOpKind::open, "missing", -ENOENT));
        sink.on_fs(refused(FsOpKind::exec, "nope", -ENOENT));
        // Refused, yet nothing to deny: a handle reads nothing, an O_TMPFILE has no name.
        sink.on_fs(refused(FsOpKind::open, "handle", -EACCES, O_RDONLY | O_PATH));
        sink.on_fs(refused(FsOpKind::open, "tmpdir", -EACCES, O_RDWR | O_TMPFILE));
        // Changes refused (Landlock alone keeping a write outside the outputs) name what they would change.
        sink.on_fs(refused(FsOpKind::mkdir, "made", -EACCES));
        sink.on_fs(refused(FsOpKind::unlink, "kept", -EPERM));
        sink.on_fs(refused(FsOpKind::truncate, "t", -EACCES));
        // Other failures, of opens and execs or of other calls, are never recorded.
        sink.on_fs(refused(FsOpKind::open, "dir", -EISDIR, O_WRONLY));
        sink.on_fs(refused(FsOpKind::open, "lock", -EEXIST, O_RDWR | O_CREAT | O_EXCL));
        sink.on_fs(refused(FsOpKind::open, "loop", -ELOOP, O_RDONLY | O_NOFOLLOW));
        sink.on_fs(refused(FsOpKind::exec, "elf", -ENOEXEC));
        sink.on_fs(refused(FsOpKind::mkdir, "exists", -EEXIST));
        sink.on_fs(refused(FsOpKind::unlink, "gone", -ENOENT));
        sink.on_fs(refused(FsOpKind::rmdir, "full", -ENOTEMPTY));
    };
    const Paths denied = {"/w/kept", "/w/made", "/w/mine", "/w/noexec", "/w/ro", "/w/secret", "/w/setuid", "/w/t"};
    const Paths probed = {"/w/missing", "/w/nope"};

    for (bool probes : {true, false}) {
        for (bool denials : {true, false}) {
            INFO("probes " << probes << ", denials " << denials);
            Recording rec;
            Command cmd;  // as each engine makes its sink: from what the command asks
            cmd.record_probes = probes;
            cmd.record_denials = denials;
            RecordingSink sink(rec, cmd);
            feed(sink);
            CHECK(paths_with(rec, kDenied) == (denials ? denied : Paths{}));
            CHECK(paths_with(rec, kProbe) == (probes ? probed : Paths{}));
            // A denial is nothing else: not read, not written.
            CHECK(rec.paths().size() == (denials ? denied.size() : 0) + (probes ? probed.size() : 0));
            CHECK(paths_with(rec, kRead | kWrite | kCreate | kRemove | kList).empty());
            CHECK(rec.complete());
        }
    }
}

TEST_CASE("a refused open through a symlink names the file it leads to, the link as its alias", "[record][sink]")
{
    qk::test::TempDir dir("qk-sink-denied");
    const std::string root = dir.path.string();
    dir.write("secret.txt", "s");
    std::filesystem::create_directories(dir.path / "allowed");
    std::filesystem::create_symlink("../secret.txt", dir.path / "allowed/link");
    std::filesystem::create_symlink("gone", dir.path / "dangling");

    Recording rec;
    RecordingSink sink(rec);
    sink.keep_denials();
    FsOp op;
    op.kind = FsOpKind::open;
    op.result = -EACCES;
    op.a = PathArg{root, "allowed/link"};
    sink.on_fs(op);
    op.a = PathArg{root, "dangling"};  // an O_CREAT through it, in a directory that may not be written
    op.flags = O_WRONLY | O_CREAT;
    sink.on_fs(op);

    CHECK(paths_with(rec, kDenied) == Paths{root + "/dangling", root + "/secret.txt"});
    CHECK(rec.aliases().at(root + "/allowed/link") == root + "/secret.txt");
    CHECK(rec.aliases().count(root + "/dangling") == 0);
}
