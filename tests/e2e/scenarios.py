"""The scenario table: for each program in tests/scenarios/, the files the test lays out before it
runs, and the exact `files` section expected under its directory, written by hand from the recording
semantics (never copied from the tool's output):

  read     opened O_RDONLY or O_RDWR; a successful exec's file (fully resolved)
  written  opened O_WRONLY / O_RDWR / with O_TRUNC; truncate, ftruncate
  created  an open that created the file; mkdir; a link's or symlink's new name
  removed  unlink, unlinkat, rmdir
  renamed  {from, to}; RENAME_EXCHANGE gives both directions
  listed   a directory opened
  probed   an open-family call or exec that failed with ENOENT
  denied   an open-family call or exec refused with EACCES or EPERM (qk-trace records them always)
Paths are canonical: symlinks in directories resolved, an open's final symlink followed (a refused
open's too: it names the file the link leads to). O_PATH and O_TMPFILE opens record nothing; failures
other than ENOENT, EACCES and EPERM record nothing.

Every path below is relative to the scenario's directory; "." is the directory itself.

The one known difference between the engines: strace cannot see whether an O_CREAT open without
O_EXCL created the file, so under strace such a file is only written (eBPF: also created). Every
scenario that hits it names it in `strace_missing`. Any other difference must be named the same way."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

# ---------------------------------------------------------------------------------------------------------
# Laying out a scenario's directory.


@dataclasses.dataclass(frozen=True)
class File:
    path: str
    text: str | None = None
    mode: int = 0o644


@dataclasses.dataclass(frozen=True)
class Dir:
    path: str


@dataclasses.dataclass(frozen=True)
class Symlink:
    path: str
    target: str


@dataclasses.dataclass(frozen=True)
class Copy:
    path: str
    source: str
    mode: int = 0o755


def lay_out(root: Path, entries) -> None:
    for e in entries:
        p = root / e.path
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(e, File):
            p.write_text(e.text if e.text is not None else f"content of {e.path}\n")
            os.chmod(p, e.mode)
        elif isinstance(e, Dir):
            p.mkdir(parents=True, exist_ok=True)
        elif isinstance(e, Symlink):
            os.symlink(e.target, p)
        elif isinstance(e, Copy):
            shutil.copyfile(e.source, p)
            os.chmod(p, e.mode)
        else:
            raise TypeError(e)


def files(*names: str, mode: int = 0o644):
    return [File(n, mode=mode) for n in names]


# ---------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Difference:
    """Paths one engine does not record that the other does, and why."""

    why: str
    paths: dict  # files key -> set of relative paths


STRACE_CANNOT_SEE_CREATION = (
    "strace cannot see whether an O_CREAT open without O_EXCL created the file (eBPF reads "
    "FMODE_CREATED): under strace the file is only written"
)


def strace_cannot_see_creation(*paths: str) -> Difference:
    return Difference(STRACE_CANNOT_SEE_CREATION, {"created": set(paths)})


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    setup: tuple = ()
    expected: dict = dataclasses.field(default_factory=dict)  # files key -> relative paths / pairs
    args: tuple = ()  # after the directory
    exit: int | str = 0  # an exit code, or the name of the signal that kills it
    complete: dict = dataclasses.field(default_factory=lambda: {"ebpf": True, "strace": True})
    # Why `complete` differs between the engines, when it does.
    complete_differs_why: str | None = None
    # What strace does not record that eBPF does, named with the reason.
    strace_missing: Difference | None = None
    # Checked by hand in its own test (test_scenarios.py) instead of the exact expected files.
    custom: bool = False
    # Why the engines' recordings may differ altogether (test_engines_agree then skips the scenario).
    engines_may_differ: str | None = None
    # Paths outside the directory that must be read, besides the scenario program (as given).
    also_read: tuple = ()
    # (exit code, why[, required]): the program exits so when this machine cannot run it (the test then
    # skips, or fails under QK_REQUIRE_PRIVILEGED=1 unless `required` is False).
    unsupported: tuple | None = None

    def __str__(self):
        return self.name


OPEN_SETUP = tuple(files("r.txt", "w.txt", "rw.txt", "t.txt", "rt.txt", "exists.txt", "excl.txt"))
OPEN_EXPECTED = dict(
    read={"r.txt", "rw.txt", "rt.txt"},
    written={"w.txt", "rw.txt", "t.txt", "rt.txt", "c.txt", "exists.txt", "x.txt"},
    created={"c.txt", "x.txt"},
)


def _with(expected: dict, **more) -> dict:
    out = {k: set(v) for k, v in expected.items()}
    for k, v in more.items():
        out[k] = out.get(k, set()) | set(v)
    return out


SCENARIOS = [
    # ---- the open family -------------------------------------------------------------------------------
    Scenario(
        "open",
        OPEN_SETUP,
        OPEN_EXPECTED,
        strace_missing=strace_cannot_see_creation("c.txt"),
    ),
    Scenario(
        "openat",
        OPEN_SETUP + (File("abs.txt"),),
        _with(OPEN_EXPECTED, read={"abs.txt"}),
        strace_missing=strace_cannot_see_creation("c.txt"),
    ),
    Scenario(
        "openat2",
        OPEN_SETUP + (Symlink("link.txt", "r.txt"),),
        OPEN_EXPECTED,
        strace_missing=strace_cannot_see_creation("c.txt"),
    ),
    Scenario(
        "creat",
        tuple(files("exists.txt")),
        dict(written={"new.txt", "exists.txt"}, created={"new.txt"}),
        # creat is O_WRONLY|O_CREAT|O_TRUNC, without O_EXCL.
        strace_missing=strace_cannot_see_creation("new.txt"),
    ),
    # ---- renames ---------------------------------------------------------------------------------------
    Scenario(
        "rename",
        (File("a.txt"), File("dir1/inner.txt")),
        dict(renamed={("a.txt", "b.txt"), ("dir1", "dir2")}),
    ),
    Scenario(
        "renameat",
        (File("a.txt"), File("b.txt"), Dir("sub")),
        dict(renamed={("a.txt", "sub/a2.txt"), ("b.txt", "b2.txt")}),
    ),
    Scenario(
        "renameat2",
        tuple(files("p1", "n1", "k1", "k2")),
        dict(renamed={("p1", "p2"), ("n1", "n2")}),
    ),
    Scenario(
        "rename_exchange",
        (File("x.txt"), File("y.txt"), Dir("dirx"), File("filey")),
        dict(
            renamed={("x.txt", "y.txt"), ("y.txt", "x.txt"), ("dirx", "filey"), ("filey", "dirx")},
        ),
    ),
    # ---- removal ---------------------------------------------------------------------------------------
    Scenario(
        "unlink",
        (File("f1"), File("f2"), Symlink("sl", "f2")),
        dict(removed={"f1", "sl"}),
    ),
    Scenario(
        "unlinkat",
        (File("f"), Dir("d"), File("g")),
        dict(removed={"f", "d", "g"}),
    ),
    Scenario(
        "rmdir",
        (Dir("empty"), File("full/file")),
        dict(removed={"empty"}),
    ),
    # ---- creation of directories and links -------------------------------------------------------------
    Scenario("mkdir", (Dir("exists"),), dict(created={"m1", "m1/m2"})),
    Scenario("mkdirat", (Dir("sub"),), dict(created={"a", "sub/b", "c"})),
    Scenario("link", tuple(files("src", "taken")), dict(created={"l1"})),
    Scenario(
        "linkat",
        (File("src"), Dir("sub"), Symlink("sl", "src")),
        dict(created={"sub/l2", "l3", "l4"}),
    ),
    Scenario("symlink", tuple(files("src", "taken")), dict(created={"s1", "s2"})),
    Scenario("symlinkat", (File("src"), Dir("sub")), dict(created={"sub/s3", "s4"})),
    # ---- truncation ------------------------------------------------------------------------------------
    Scenario(
        "truncate",
        (File("t1"), File("t2"), Symlink("tl", "t2")),
        dict(written={"t1", "t2"}),
    ),
    Scenario(
        "ftruncate",
        (File("f1"),),
        # f2 is written only by the ftruncate, which happens after f1 was renamed to f2.
        dict(written={"f1", "f2"}, renamed={("f1", "f2")}),
    ),
    # ---- working directory and relative paths ----------------------------------------------------------
    Scenario(
        "chdir",
        (File("sub/in.txt"), File("sub/in2.txt"), Dir("sub/deeper"), File("up.txt")),
        dict(
            read={"sub/in.txt", "up.txt", "sub/in2.txt"},
            created={"sub/made", "sub/deeper/x.txt"},
            written={"sub/deeper/x.txt"},
        ),
    ),
    Scenario(
        "fchdir",
        (File("sub/in.txt"), File("other/gone")),
        dict(
            listed={"sub"},
            read={"sub/in.txt"},
            created={"other/new.txt"},
            written={"other/new.txt"},
            removed={"other/gone"},
        ),
    ),
    Scenario(
        "rel_cwd",
        (File("a.txt"), Dir("sub"), File("r1"), File("u")),
        dict(
            read={"a.txt"},
            created={"sub/b.txt", "m", "sl"},
            written={"sub/b.txt"},
            renamed={("r1", "r2")},
            removed={"u"},
            probed={"missing"},
        ),
    ),
    Scenario(
        "rel_dirfd",
        (File("sub/a.txt"), File("sub/nested/c.txt"), File("sub/gone.txt"), File("sub/r1"), File("b.txt")),
        dict(
            read={"sub/a.txt", "sub/nested/c.txt"},
            written={"b.txt"},
            probed={"sub/missing.txt"},
            created={"sub/newdir", "sub/sl", "sub/hl"},
            removed={"sub/gone.txt"},
            renamed={("sub/r1", "sub/r2")},
        ),
    ),
    Scenario(
        "dirfd_moved",
        (File("sub/a.txt"),),
        dict(renamed={("sub", "moved")}, read={"moved/a.txt"}, created={"moved/m"}),
    ),
    Scenario(
        "cwd_moved",
        (File("sub/b.txt"),),
        dict(renamed={("sub", "moved")}, read={"moved/b.txt"}, created={"moved/n"}),
    ),
    # ---- symlinks on the path --------------------------------------------------------------------------
    Scenario(
        "symlink_dir",
        (File("real/f"), File("real/u"), File("real/r1"), Symlink("link", "real")),
        dict(
            read={"real/f"},
            created={"real/new", "real/md"},
            written={"real/new"},
            removed={"real/u"},
            renamed={("real/r1", "real/r2")},
            probed={"real/missing"},
            listed={"real"},
        ),
    ),
    Scenario(
        "symlink_file",
        (
            File("target.txt"),
            Symlink("ln", "target.txt"),
            File("sub/t2.txt"),
            Symlink("ln2", "sub/t2.txt"),
            Symlink("dangle", "made-by-link.txt"),
        ),
        dict(
            read={"target.txt"},
            written={"sub/t2.txt", "made-by-link.txt"},
            created={"made-by-link.txt"},
        ),
        # The open of `dangle` is O_WRONLY|O_CREAT without O_EXCL.
        strace_missing=strace_cannot_see_creation("made-by-link.txt"),
    ),
    # ---- processes -------------------------------------------------------------------------------------
    Scenario(
        "threads",
        (File("in.txt"),),
        dict(
            read={"in.txt"},
            created={f"t{i}.txt" for i in range(4)},
            written={f"t{i}.txt" for i in range(4)},
        ),
    ),
    Scenario("vfork_exec", (File("in.txt"),), dict(read={"in.txt"}), also_read=("/bin/cat",)),
    Scenario(
        "fork_exec",
        (File("in.txt"),),
        dict(read={"in.txt"}, created={"child2.txt"}, written={"child2.txt"}),
        also_read=("/bin/cat",),
    ),
    Scenario(
        "clone3",
        (),
        dict(created={"child.txt", "parent.txt"}, written={"child.txt", "parent.txt"}),
    ),
    # ---- exec ------------------------------------------------------------------------------------------
    Scenario("exec_fail", (File("notexec", mode=0o644),), dict(probed={"nope", "nodir/x"}, denied={"notexec"})),
    Scenario(
        "exec_path",
        (Dir("bin1"), Copy("bin2/tool", "/bin/true")),
        dict(probed={"bin1/tool"}, read={"bin2/tool"}),
    ),
    Scenario(
        "exec_script",
        (File("script.sh", "#!/bin/sh\nexit 0\n", mode=0o755),),
        dict(read={"script.sh"}),
    ),
    Scenario("execveat", (Copy("bin/tool", "/bin/true"),), dict(read={"bin/tool"})),
    Scenario(
        "exec_symlink",
        (Copy("bin/tool", "/bin/true"), Symlink("run", "bin/tool")),
        dict(read={"bin/tool"}),
    ),
    # ---- refusals -------------------------------------------------------------------------------------
    Scenario(
        "denied",
        (
            File("allowed/ok.txt"),
            File("secret.txt"),
            File("secret2.txt"),
            File("sub/secret3.txt"),
            Symlink("allowed/to-secret2", "../secret2.txt"),
            Copy("bin/tool", "/bin/true"),
        ),
        dict(
            read={"allowed/ok.txt"},
            # The refused open of allowed/to-secret2 names where the link leads.
            denied={"secret.txt", "secret2.txt", "sub/secret3.txt", "bin/tool"},
            probed={"allowed/missing", "allowed/nope"},
        ),
        unsupported=(3, "this kernel has no Landlock (or it is disabled)"),
    ),
    # ---- probes, O_TMPFILE, listings -------------------------------------------------------------------
    Scenario(
        "missing",
        (),
        dict(
            probed={"missing.txt", "missing2.txt", "nodir/x", "later"},
            created={"later"},
            written={"later"},
        ),
    ),
    Scenario("tmpfile", (), dict(created={"named", "named2"})),
    Scenario(
        "listdir",
        (File("dir/a"), File("dir/b"), File("dir2/c")),
        dict(listed={"dir", "dir2"}),
    ),
    # A handle names no path: eBPF takes the returned fd's, strace's handle is opened again by qk.
    Scenario("open_by_handle", (File("handle.txt"),), dict(read={"handle.txt"}, listed={"."})),
    # ---- io_uring --------------------------------------------------------------------------------------
    Scenario(
        "io_uring_nop",
        (File("plain.txt"),),
        dict(read={"plain.txt"}),
        complete={"ebpf": True, "strace": False},
        complete_differs_why=(
            "strace cannot see what an io_uring ring does, so any io_uring_setup makes a strace recording "
            "incomplete; the eBPF recorder sees the ring's opcodes and a ring of NOPs does no file operation"
        ),
    ),
    Scenario(
        "io_uring_open",
        (File("uring.txt"),),
        custom=True,  # test_io_uring_open: incomplete under both engines
        complete={"ebpf": False, "strace": False},
    ),
    # ---- 32-bit system calls -------------------------------------------------------------------------
    Scenario(
        "int80",
        (File("int80.txt"),),
        custom=True,  # test_int80: decoded (int80.txt read) or incomplete, never complete without it
        # Not required under QK_REQUIRE_PRIVILEGED=1: without the entry no program can make the calls
        # (microVM and confidential guests turn it off), so there is no hole to test.
        unsupported=(3, "this kernel has no 32-bit syscall entry (IA32_EMULATION, or it is turned off)", False),
        engines_may_differ=(
            "an engine may decode the 32-bit open (strace knows the i386 table) or mark the recording "
            "incomplete (the eBPF programs sit on the 64-bit syscall tracepoints): both are right"
        ),
    ),
    # ---- the rest --------------------------------------------------------------------------------------
    Scenario("burst", (File("burst.txt"),), dict(read={"burst.txt"}), args=("1000",)),
    Scenario(
        "churn",
        (),
        dict(
            created={f"f{i}.txt" for i in range(3)},
            written={f"f{i}.txt" for i in range(3)},
            read={f"f{i}.txt" for i in range(3)},
        ),
        args=("3", "1"),
    ),
    Scenario(
        "longpath",
        (),
        custom=True,  # test_longpath: incomplete, and every path recorded is a real one
        complete={"ebpf": False, "strace": False},
    ),
    Scenario("leftover", (), dict(created={"started.txt"}, written={"started.txt"})),
    Scenario("killed", (), dict(created={"before.txt"}, written={"before.txt"}), exit="SIGKILL"),
    Scenario("crash", (), dict(created={"before.txt"}, written={"before.txt"}), exit="SIGSEGV"),
]

BY_NAME = {s.name: s for s in SCENARIOS}


def scenario_sources() -> set[str]:
    here = Path(__file__).resolve().parents[1] / "scenarios"
    return {p.stem for p in here.glob("*.c")}
