"""One qk run at a time in a workspace: a second run waits for the first, saying so, or with --no-wait
fails at once naming the holder; a run killed outright leaves no lock behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from audit_workspace import QK, make_workspace, qk


def blocking_workspace(tmp_path: Path):
    started, fifo = tmp_path / "started", tmp_path / "fifo"
    os.mkfifo(fifo)
    ws = make_workspace(tmp_path / "ws", {"app": {"root": ".", "targets": {
        "block": {"command": f"echo go > {started} && cat {fifo} > /dev/null"},
        "quick": {"command": "echo quick"},
        "mark": {"command": f"touch {tmp_path / 'marked'}"}}}})
    return ws, started, fifo


def start_blocking(ws: Path, started: Path) -> subprocess.Popen:
    first = subprocess.Popen([str(QK), "run-many", "-t", "block"], cwd=ws, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert first.poll() is None, first.stdout.read()
        assert time.monotonic() < deadline, "the first run's task never started"
        time.sleep(0.01)
    return first


def test_a_second_run_with_no_wait_fails_naming_the_holder(tmp_path):
    ws, started, fifo = blocking_workspace(tmp_path)
    first = start_blocking(ws, started)
    try:
        r = qk(ws, "run-many", "-t", "quick", "--no-wait")
        assert r.returncode != 0
        assert f"another qk run is running in this workspace (pid {first.pid})" in r.stderr, r.stderr
        assert "quick" not in r.stdout
    finally:
        with open(fifo, "w") as f:
            f.write("done\n")
        first.wait(60)
    assert first.returncode == 0


def test_a_second_run_waits_for_the_first_and_says_so(tmp_path):
    ws, started, fifo = blocking_workspace(tmp_path)
    first = start_blocking(ws, started)
    second = subprocess.Popen([str(QK), "run-many", "-t", "quick"], cwd=ws, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    line = second.stdout.readline()  # blocks until it says it waits: it cannot run before
    assert "another qk run is running in this workspace" in line and "waiting" in line, line
    assert second.poll() is None
    with open(fifo, "w") as f:
        f.write("done\n")
    assert first.wait(60) == 0
    out = second.stdout.read()
    assert second.wait(60) == 0, out
    assert "quick" in out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_run_waiting_for_the_lock_ends_at_once_on_a_signal_running_nothing(sig, tmp_path):
    ws, started, fifo = blocking_workspace(tmp_path)
    first = start_blocking(ws, started)
    out, err = tmp_path / "second.out", tmp_path / "second.err"
    with out.open("w") as o, err.open("w") as e:
        second = subprocess.Popen([str(QK), "run-many", "-t", "mark"], cwd=ws, stdout=o, stderr=e)
    try:
        deadline = time.monotonic() + 60
        while "waiting for it to end" not in out.read_text():
            assert second.poll() is None, out.read_text() + err.read_text()
            assert time.monotonic() < deadline, "the second run never said it waits"
            time.sleep(0.01)
        second.send_signal(sig)
        try:
            second.wait(10)  # the first run holds the lock until its FIFO is written: an end now is prompt
        except subprocess.TimeoutExpired:
            pytest.fail(f"the waiting run went on waiting after {sig.name}")
        assert second.returncode == 128 + sig, out.read_text() + err.read_text()
        assert err.read_text() == (f"qk: stopped by {sig.name} while waiting for the workspace lock held by another "
                                   f"qk run (pid {first.pid}): no task ran\n")
        assert not (tmp_path / "marked").exists(), "the stopped run ran its task"
        assert first.poll() is None
    finally:
        with open(fifo, "w") as f:
            f.write("done\n")
        first_out = first.communicate(timeout=60)[0]
    assert first.returncode == 0, first_out
    assert "Successfully ran target block" in first_out, first_out
    assert not (tmp_path / "marked").exists()


def test_the_lock_leaves_qk_state_out_of_git(tmp_path):
    ws, started, fifo = blocking_workspace(tmp_path)
    r = qk(ws, "run-many", "-t", "quick")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / ".qk" / ".gitignore").read_text() == "*\n"  # .qk made by the cache, not by the lock
    assert (ws / ".qk" / "run.lock").exists()


def test_a_run_killed_outright_leaves_no_lock(tmp_path):
    ws, started, fifo = blocking_workspace(tmp_path)
    first = start_blocking(ws, started)
    first.kill()
    first.wait()
    r = qk(ws, "run-many", "-t", "quick", "--no-wait")
    assert r.returncode == 0, r.stdout + r.stderr
    # The blocked task of the killed run may still be waiting on its FIFO: release it.
    _release(fifo)


def _release(fifo: Path) -> None:
    """Opening the FIFO for writing lets a reader's open return, closing it gives the reader its end of
    file. No reader (ENXIO): nothing to release. Once, not a probe and then an open: the released reader
    may be gone by the second."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass
