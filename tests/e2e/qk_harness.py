"""Shared helpers of the end-to-end tests: where the binaries are, running qk-trace, validating its
JSON against schemas/trace.schema.json, and reducing a recording to the paths under one directory.

Run with Debian's /usr/bin/python3 (python3-pytest, python3-jsonschema), as ctest does."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import jsonschema
import pytest

import schema_check

SOURCE_DIR = schema_check.SOURCE_DIR
BUILD_DIR = Path(os.environ.get("QK_BUILD_DIR") or SOURCE_DIR / "build" / "default")
QK_TRACE = BUILD_DIR / "qk-trace"
SCENARIO_DIR = BUILD_DIR / "tests" / "scenarios"
SCHEMA_PATH = SOURCE_DIR / "schemas" / "trace.schema.json"

RECORDERS = ("ebpf", "strace")
FILE_KEYS = ("read", "written", "created", "removed", "listed", "probed", "denied")
ALL_FILE_KEYS = FILE_KEYS + ("renamed",)

# npm and pnpm wait 5 minutes on a stalled connection by default, twice over: one stalled tarball took a
# CI run's pnpm install past its 600 s. Shorter waits with more retries ride out a slow registry.
# The user's own settings win.
os.environ.setdefault("npm_config_fetch_timeout", "60000")
os.environ.setdefault("npm_config_fetch_retries", "5")
os.environ.setdefault("npm_config_fetch_retry_maxtimeout", "20000")

def schema_validator() -> jsonschema.Draft202012Validator:
    return schema_check.validator(SCHEMA_PATH.name)


def schema_errors(doc) -> list[str]:
    """Every way `doc` breaks the trace schema, as readable lines (empty when valid)."""
    return schema_check.errors(SCHEMA_PATH.name, doc)


_NON_CANONICAL = re.compile(r"//|/\./|/\.\./|/\.$|/\.\.$")


def contract_errors(doc) -> list[str]:
    """What the schema cannot say: every list of paths sorted and unique, paths lexically canonical."""
    errors = []
    files = doc.get("files", {})
    for key in FILE_KEYS:
        paths = files.get(key, [])
        if paths != sorted(set(paths)):
            errors.append(f"files.{key} is not sorted and unique")
        for p in paths:
            if _NON_CANONICAL.search(p) or (len(p) > 1 and p.endswith("/")):
                errors.append(f"files.{key}: not canonical: {p!r}")
    renamed = [(r.get("from"), r.get("to")) for r in files.get("renamed", [])]
    if renamed != sorted(set(renamed)):
        errors.append("files.renamed is not sorted (by from, then to) and unique")
    return errors


@dataclasses.dataclass
class TraceRun:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    doc: dict | None  # the --json document, or None when none was written

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.argv)}\n-> exit {self.returncode} after {self.elapsed:.2f}s\n"
            f"--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"
        )

    def stdout_pids(self) -> dict[str, int]:
        """The "<label> <pid>" lines the scenario programs print."""
        out = {}
        for line in self.stdout.splitlines():
            m = re.fullmatch(r"(\w+) (\d+)", line.strip())
            if m:
                out[m.group(1)] = int(m.group(2))
        return out

    def processes(self) -> dict[int, dict]:
        return {p["pid"]: p for p in (self.doc or {}).get("processes", [])}


def run_trace(
    command: list[str],
    *,
    recorder: str | None = None,
    cwd: Path | str | None = None,
    json_path: Path | str | None = None,
    env: dict[str, str] | None = None,
    extra_args: list[str] | None = None,
    timeout: float = 300,
    validate: bool = True,
) -> TraceRun:
    """Runs qk-trace on `command`. With json_path, the document is loaded and (by default) checked
    against the schema and the sorted/unique contract; a document that breaks either fails the test."""
    argv = [str(QK_TRACE)]
    if recorder:
        argv += ["--recorder", recorder]
    if json_path is not None:
        Path(json_path).unlink(missing_ok=True)
        argv += ["--json", str(json_path)]
    if cwd is not None:
        argv += ["-C", str(cwd)]
    argv += list(extra_args or [])
    argv += ["--"] + [str(c) for c in command]
    full_env = dict(os.environ)
    full_env.update(env or {})
    start = time.monotonic()
    proc = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", env=full_env, timeout=timeout
    )
    elapsed = time.monotonic() - start
    doc = None
    if json_path is not None and Path(json_path).exists():
        text = Path(json_path).read_text()
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise AssertionError(f"qk-trace wrote invalid JSON to {json_path}: {e}\n{text[:2000]}") from e
    run = TraceRun(argv, proc.returncode, proc.stdout, proc.stderr, elapsed, doc)
    if validate and doc is not None:
        problems = schema_errors(doc) + contract_errors(doc)
        assert not problems, "the trace JSON breaks schemas/trace.schema.json or its contract:\n  " + "\n  ".join(
            problems
        ) + "\n" + run.describe()
    return run


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def rel(path: str, root: str) -> str:
    return "." if path == root else path[len(root.rstrip("/")) + 1 :]


def files_under(doc: dict, root: str) -> dict[str, set]:
    """The files section restricted to paths under `root` (root itself included), relative to it.
    renamed keeps a pair when either side is under root (the other side stays absolute if not)."""
    files = doc["files"]
    out: dict[str, set] = {k: {rel(p, root) for p in files[k] if under(p, root)} for k in FILE_KEYS}
    pairs = set()
    for r in files["renamed"]:
        if under(r["from"], root) or under(r["to"], root):
            pairs.add(
                (
                    rel(r["from"], root) if under(r["from"], root) else r["from"],
                    rel(r["to"], root) if under(r["to"], root) else r["to"],
                )
            )
    out["renamed"] = pairs
    return out


def normalise_expected(files: dict) -> dict[str, set]:
    out = {k: set(files.get(k, ())) for k in FILE_KEYS}
    out["renamed"] = {tuple(p) for p in files.get("renamed", ())}
    return out


def diff_files(actual: dict[str, set], expected: dict[str, set]) -> list[str]:
    lines = []
    for key in ALL_FILE_KEYS:
        missing = sorted(expected[key] - actual[key])
        unexpected = sorted(actual[key] - expected[key])
        if missing or unexpected:
            lines.append(f"{key}: missing {missing}, unexpected {unexpected}")
    return lines


# ---------------------------------------------------------------------------------------------------------
# What this machine allows. A test that needs something missing skips (or fails under QK_REQUIRE_PRIVILEGED=1).


def _cap_effective() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


def cgroup2_mount() -> str | None:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        if right.split(" ")[0] == "cgroup2":
            return left.split(" ")[4]
    return None


def privilege_problems(recorder: str | None) -> list[str]:
    """Why a privileged test of `recorder` (None: any recorder, just a cgroup) cannot run here."""
    problems = []
    if os.geteuid() != 0:
        problems.append("not root (the e2e recorder tests need root for cgroups and eBPF)")
    mount = cgroup2_mount()
    if mount is None:
        problems.append("no cgroup2 filesystem mounted")
    elif not os.access(mount, os.W_OK):
        problems.append(f"cgroup2 mount {mount} is not writable")
    if recorder == "ebpf":
        if not Path("/sys/kernel/btf/vmlinux").exists():
            problems.append("no kernel BTF at /sys/kernel/btf/vmlinux (CO-RE eBPF cannot load)")
        caps = _cap_effective()
        if not (caps >> 39 & 1 or caps >> 21 & 1):  # CAP_BPF or CAP_SYS_ADMIN
            problems.append("neither CAP_BPF nor CAP_SYS_ADMIN")
    if recorder == "strace" and shutil.which("strace") is None:
        problems.append("strace is not installed (scripts/setup installs it)")
    return problems


def require_privileged_env() -> bool:
    return os.environ.get("QK_REQUIRE_PRIVILEGED", "") not in ("", "0")


def skip_or_fail(reason: str):
    """Skips the test, or fails it when QK_REQUIRE_PRIVILEGED=1."""
    if require_privileged_env():
        pytest.fail(f"QK_REQUIRE_PRIVILEGED=1 but this test cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


NOT_APPLICABLE = "not applicable on this machine: "


def not_applicable(reason: str):
    """Skips a test of something this machine's kernel cannot do at all (no 32-bit system call entry):
    no program can then do it, so there is no hole to test. Not a missing privilege, so
    QK_REQUIRE_PRIVILEGED=1 keeps it a skip (conftest.py), and the summary counts it."""
    pytest.skip(NOT_APPLICABLE + reason)


def require_privileges(recorder: str | None = None):
    problems = privilege_problems(recorder)
    if problems:
        skip_or_fail(f"needs privileges for {recorder or 'a cgroup'}: " + "; ".join(problems))


# ---------------------------------------------------------------------------------------------------------
# One scenario run under qk-trace (see the `recorded` fixture).


class Recorded:
    def __init__(self, scenario, recorder: str, root: str, program: str, run: TraceRun):
        self.scenario = scenario
        self.recorder = recorder
        self.root = root
        self.program = program
        self.run = run

    @property
    def doc(self) -> dict:
        assert self.run.doc is not None, "qk-trace wrote no JSON\n" + self.run.describe()
        return self.run.doc

    def files(self) -> dict:
        return files_under(self.doc, self.root)

    def check_exit(self):
        """The command's exit passes through qk-trace and into the document."""
        want = self.scenario.exit
        if isinstance(want, int):
            assert self.run.returncode == want, self.run.describe()
            assert self.doc.get("exitCode") == want and "signal" not in self.doc, self.run.describe()
        else:
            rc = 128 + int(getattr(signal, want))
            assert self.run.returncode == rc, f"expected exit {rc} ({want})\n" + self.run.describe()
            assert self.doc.get("signal") == want and "exitCode" not in self.doc, self.run.describe()


def open_when_read(fifo: Path, proc: subprocess.Popen, timeout: float = 60) -> int:
    """A write end of `fifo`, once a task of `proc` has opened it to read (so the task is running, its key
    computed and its sandbox built); fails if `proc` ends first. The caller writes or closes it to let the
    task go on."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else proc.returncode
            assert time.monotonic() < deadline, "the task never opened its fifo"
            time.sleep(0.01)
