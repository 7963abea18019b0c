"""Bad input: a command that does not exist, a recorder that does not exist, no command at all, and
a command that crashes. (An unparsable strace line is tested on the parser, in tests/unit.)"""

from __future__ import annotations

import subprocess

import pytest

import qk_harness as h


@pytest.mark.parametrize("recorder", h.RECORDERS)
@pytest.mark.parametrize("command", ["qk-no-such-command-4711", "/nonexistent-dir/qk-no-such-command-4711"])
def test_missing_command_exits_127_and_names_it(recorder, command, qk_trace, workspace, json_path):
    run = h.run_trace([command, "arg"], recorder=recorder, cwd=workspace, json_path=json_path)
    assert run.returncode == 127, run.describe()
    assert command in run.stderr, "the error message must name the missing command\n" + run.describe()


def test_unknown_recorder_is_a_clear_error(qk_trace, workspace):
    marker = workspace / "ran"
    proc = subprocess.run(
        [str(qk_trace), "--recorder", "bogus", "--", "/bin/touch", str(marker)],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode not in (0, 127), proc
    assert "bogus" in proc.stderr, f"the error must name the bad value: {proc.stderr!r}"
    assert not marker.exists(), "the command ran despite the bad option"


def test_no_command_is_an_error(qk_trace):
    proc = subprocess.run([str(qk_trace)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0, proc
    assert proc.stderr.strip(), "qk-trace without a command must say what is missing"


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_crashing_command_status_passes_through(recorder, recorded):
    """A command that dies of SIGSEGV: qk-trace exits 139, the document says "signal": "SIGSEGV",
    and what it did before the crash is recorded."""
    rec = recorded("crash", recorder)
    rec.check_exit()
    procs = list(rec.run.processes().values())
    assert [p.get("signal") for p in procs] == ["SIGSEGV"], procs
    assert rec.files()["created"] == {"before.txt"}
