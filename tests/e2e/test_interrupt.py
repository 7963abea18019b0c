"""A run killed in the middle: SIGTERM (or Ctrl-C) kills the command through its cgroup, the trace is
still written, marked incomplete and interrupted, and nothing is left behind. (SIGKILL, which qk-trace
cannot handle: test_leftovers.py.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import qk_harness as h


def task_cgroup_of(pid: int) -> Path | None:
    """The qk task cgroup a process runs in, if any."""
    mount = h.cgroup2_mount()
    if mount is None:
        pytest.fail("no cgroup2 mount")
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        if line.startswith("0::/qk/"):
            return Path(mount) / line[4:]
    return None


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting for init to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def wait_for(condition, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def start_sleeper(qk_trace: Path, recorder: str, workspace: Path, json_path: Path) -> tuple[subprocess.Popen, int]:
    """qk-trace running a shell that writes its pid, then becomes `sleep 300`."""
    pid_file = workspace / "pid"
    proc = subprocess.Popen(
        [str(qk_trace), "--recorder", recorder, "--json", str(json_path), "--",
         "/bin/sh", "-c", f"echo $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file} && exec sleep 300"],
        # Files, not pipes: the command inherits them, and a pipe would stay open after qk-trace dies.
        stdout=subprocess.DEVNULL, stderr=(workspace.parent / "stderr").open("w"),
    )
    wait_for(pid_file.exists, "the traced command to start")
    return proc, int(pid_file.read_text())


@pytest.mark.parametrize("recorder", h.RECORDERS)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_run_kills_the_command_and_still_reports(recorder, sig, qk_trace, workspace, json_path):
    proc, command_pid = start_sleeper(qk_trace, recorder, workspace, json_path)
    cgroup = task_cgroup_of(command_pid)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    stderr = (workspace.parent / "stderr").read_text()
    assert proc.returncode == 128 + sig, stderr
    assert not alive(command_pid), "the interrupted command still runs"
    assert cgroup is None or not cgroup.exists(), "an interrupted run left its cgroup behind"
    doc = json.loads(json_path.read_text())
    assert h.schema_errors(doc) == []
    assert doc["complete"] is False
    assert doc["signal"] == signal.Signals(sig).name
    assert any(f"interrupted by {signal.Signals(sig).name}" in r for r in doc["incompleteReasons"]), doc
    assert "interrupted" in stderr
