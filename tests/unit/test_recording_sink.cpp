// What each event means, decided once for every engine.
#include <fcntl.h>
#include <linux/fs.h>

#include <catch2/catch.hpp>

#include "qk/record/recording_sink.hpp"
#include "recording_queries.hpp"

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
    CHECK(rec.paths().count("/w/src") == 0);
    CHECK(rec.paths().count("/w/failed") == 0);
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
