"""The scenario suite: each program of tests/scenarios/ run under qk-trace with each recorder, the exact
`files` section under its directory asserted (expectations in scenarios.py, written from the
semantics), and the two engines' recordings compared: they must be identical but for the differences
each scenario names."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

import qk_harness as h
import scenarios as sc

EXACT = [s for s in sc.SCENARIOS if not s.custom]
# Not compared: the scenarios whose engines may differ altogether, for the reason each names.
COMPARED = [s for s in sc.SCENARIOS if not s.engines_may_differ]


def skip_if_unsupported(scenario, returncode: int):
    """Skips when the program said this machine cannot run it; fails under QK_REQUIRE_PRIVILEGED=1
    unless the scenario says what it lacks is not required (a third element, False)."""
    if scenario.unsupported and returncode == scenario.unsupported[0]:
        required = scenario.unsupported[2] if len(scenario.unsupported) > 2 else True
        if required:
            h.skip_or_fail(scenario.unsupported[1])
        h.not_applicable(scenario.unsupported[1])


def test_every_scenario_program_has_expectations():
    assert sc.scenario_sources() == set(sc.BY_NAME), (
        "tests/scenarios/*.c and the table in tests/e2e/scenarios.py must name the same scenarios"
    )


@pytest.mark.parametrize("scenario", sc.SCENARIOS, ids=str)
def test_scenario_runs_untraced(scenario, scenario_path, tmp_path):
    """The program does what its comment says without qk-trace: it checks each call's result itself,
    so a failure here is a bug in the scenario, not in a recorder."""
    if scenario.name == "tmpfile" and os.geteuid() != 0:
        h.skip_or_fail("linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH")
    root = tmp_path / "ws"
    root.mkdir()
    root = os.path.realpath(root)
    sc.lay_out(Path(root), scenario.setup)
    proc = subprocess.run(
        [str(scenario_path(scenario.name)), root, *scenario.args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    skip_if_unsupported(scenario, proc.returncode)
    try:
        want = scenario.exit if isinstance(scenario.exit, int) else -int(getattr(signal, scenario.exit))
        assert proc.returncode == want, f"exit {proc.returncode}, want {want}\n{proc.stdout}\n{proc.stderr}"
    finally:
        m = re.search(r"^daemon (\d+)$", proc.stdout, re.M)
        if m:  # leftover's `sleep 300`, which nothing kills when it runs untraced
            try:
                os.kill(int(m.group(1)), signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.parametrize("scenario", EXACT, ids=str)
@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_scenario_files(scenario, recorder, recorded):
    """The exact files section under the scenario's directory, and the program itself read."""
    rec = recorded(scenario.name, recorder)
    skip_if_unsupported(scenario, rec.run.returncode)
    rec.check_exit()
    doc = rec.doc
    assert doc["recorder"] == recorder
    assert doc["cwd"] == rec.root
    assert doc["command"] == [rec.program, rec.root, *scenario.args]

    expected = h.normalise_expected(scenario.expected)
    if recorder == "strace" and scenario.strace_missing:
        for key, paths in scenario.strace_missing.paths.items():
            expected[key] -= paths
    problems = h.diff_files(rec.files(), expected)
    assert not problems, (
        f"{scenario.name} under {recorder}: files under {rec.root} differ from the expected "
        "(paths relative to it):\n  " + "\n  ".join(problems) + "\n" + rec.run.describe()
    )

    read = set(doc["files"]["read"])
    for must in (rec.program, *scenario.also_read):
        assert os.path.realpath(must) in read, f"{os.path.realpath(must)} (executed) is not in read"

    want_complete = scenario.complete[recorder]
    assert doc["complete"] is want_complete, (
        f"complete is {doc['complete']}, want {want_complete}: {doc['incompleteReasons']}"
    )


@pytest.mark.parametrize("scenario", COMPARED, ids=str)
def test_engines_agree(scenario, recorded):
    """eBPF and strace record the same files under the scenario's directory, the same completeness and
    the same processes (up to pids), except for what the scenario names."""
    for recorder in h.RECORDERS:
        h.require_privileges(recorder)
    ebpf = recorded(scenario.name, "ebpf")
    strace = recorded(scenario.name, "strace")
    skip_if_unsupported(scenario, ebpf.run.returncode)
    ebpf_files = ebpf.files()
    if scenario.strace_missing:
        # Named difference: scenario.strace_missing.why
        for key, paths in scenario.strace_missing.paths.items():
            ebpf_files[key] -= paths
    problems = h.diff_files(strace.files(), ebpf_files)
    assert not problems, (
        f"{scenario.name}: strace's recording (actual) differs from eBPF's (expected), paths relative to "
        "each run's directory:\n  " + "\n  ".join(problems)
    )
    if scenario.complete_differs_why is None:
        assert ebpf.doc["complete"] == strace.doc["complete"], (
            f"eBPF complete={ebpf.doc['complete']} {ebpf.doc['incompleteReasons']}, "
            f"strace complete={strace.doc['complete']} {strace.doc['incompleteReasons']}"
        )

    def shape(rec):
        def argv(a):
            return tuple(x.replace(rec.root, "<dir>") for x in a)

        # Sorted by a key where "none" (a process killed has no exit code, one that exited no signal) is -1:
        # two processes of one command line, one killed and one not, cannot be ordered by None and an int.
        def known(v):
            return -1 if v is None else v

        return sorted(((argv(p["argv"]), p.get("exitCode"), p.get("signal")) for p in rec.doc["processes"]),
                      key=lambda t: (t[0], known(t[1]), known(t[2])))

    assert shape(ebpf) == shape(strace), "the processes differ (argv, exitCode, signal)"


# ---------------------------------------------------------------------------------------------------------
# Scenarios whose expectations are not a fixed files section.


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_longpath(recorder, recorded):
    """A path over 4096 bytes: incomplete with a reason, and nothing recorded is wrong: the directories
    whose paths fit are created, nothing else under the directory is recorded, no path is cut."""
    rec = recorded("longpath", recorder)
    rec.check_exit()
    doc = rec.doc
    assert doc["complete"] is False, "a path over 4096 bytes must make the recording incomplete"
    assert any(re.search(r"path", r, re.I) for r in doc["incompleteReasons"]), doc["incompleteReasons"]

    made = [line[5:] for line in rec.run.stdout.splitlines() if line.startswith("made ")]
    assert len(made) >= 20 and len(made[-1]) > 4096, "the scenario did not build a path over 4096 bytes"
    dirs = made[:-1]
    expected = h.normalise_expected({"created": {h.rel(d, rec.root) for d in dirs if len(d) < 4096}})
    problems = h.diff_files(rec.files(), expected)
    assert not problems, "\n  ".join(["files under the directory (relative to it):"] + problems)
    for key in h.FILE_KEYS:
        for p in doc["files"][key]:
            assert len(p) < 4096, f"files.{key} holds a path of {len(p)} bytes"


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_io_uring_open(recorder, recorded):
    """A file opened through IORING_OP_OPENAT never passes through the openat syscall: eBPF sees the
    io_uring submission and marks the recording incomplete; strace marks any io_uring_setup incomplete.
    (Should the eBPF engine come to decode io_uring opens, this expectation changes to: complete, with
    uring.txt read.)"""
    rec = recorded("io_uring_open", recorder)
    rec.check_exit()
    doc = rec.doc
    assert doc["complete"] is False, "an io_uring file operation must make the recording incomplete"
    assert any(re.search(r"io_uring", r, re.I) for r in doc["incompleteReasons"]), doc["incompleteReasons"]
    files = rec.files()
    allowed = h.normalise_expected({"read": {"uring.txt"}})
    extra = {k: v - allowed[k] for k, v in files.items() if v - allowed[k]}
    assert not extra, f"recorded under the directory, but never done: {extra}"


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_int80(recorder, recorded):
    """A 32-bit open through `int $0x80` from a 64-bit program: the recorder decodes it (int80.txt is
    read) or marks the recording incomplete. Complete without the file would be a silent hole."""
    rec = recorded("int80", recorder)
    skip_if_unsupported(sc.BY_NAME["int80"], rec.run.returncode)
    rec.check_exit()
    doc = rec.doc
    files = rec.files()
    if doc["complete"]:
        assert files["read"] == {"int80.txt"}, (
            f"complete, yet the 32-bit open of int80.txt is not recorded: {files}"
        )
    else:
        assert any(re.search(r"32-bit", r, re.I) for r in doc["incompleteReasons"]), doc["incompleteReasons"]
    allowed = h.normalise_expected({"read": {"int80.txt"}})
    extra = {k: v - allowed[k] for k, v in files.items() if v - allowed[k]}
    assert not extra, f"recorded under the directory, but never done: {extra}"


@pytest.mark.privileged("ebpf")
@pytest.mark.parametrize("name", ["io_uring_nop", "io_uring_open"])
def test_io_uring_without_its_tracepoint(name, scenario_path, tmp_path):
    """Where io_uring's tracepoint cannot be attached (QK_EBPF_IO_URING_TRACEPOINT=0 acts as such a
    kernel), the eBPF recorder cannot see what a ring does: any io_uring_setup then makes the recording
    incomplete, as under strace, even for a ring of NOPs that a kernel with the tracepoint proves harmless."""
    base = Path(os.path.realpath(tmp_path))
    root = base / "ws"
    root.mkdir()
    sc.lay_out(root, sc.BY_NAME[name].setup)
    run = h.run_trace(
        [scenario_path(name), root], recorder="ebpf", cwd=root, json_path=base / "trace.json",
        env={"QK_EBPF_IO_URING_TRACEPOINT": "0"},
    )
    assert run.returncode == 0, run.describe()
    doc = run.doc
    assert doc["complete"] is False, doc
    assert any("io_uring instance was set up" in r for r in doc["incompleteReasons"]), doc["incompleteReasons"]
