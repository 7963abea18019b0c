"""Ways of touching files that once went unrecorded while the recording said it was complete: a process
that moves out of its task's cgroup, a file opened by handle, a regular file made by mknod, a chroot, a
mount of the task's own (a file opened by handle: the scenario open_by_handle). Each is now recorded as the file it is, or makes the recording incomplete with
the reason; none passes silently."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import qk_harness as h
from test_interrupt import alive, wait_for

PY = "/usr/bin/python3"


def trace(recorder: str, command: list[str], cwd: Path, tmp_path: Path) -> h.TraceRun:
    run = h.run_trace(command, recorder=recorder, cwd=cwd, json_path=tmp_path / "trace.json")
    assert run.doc is not None, run.describe()
    return run


def files(run: h.TraceRun, root: Path) -> dict[str, set]:
    return h.files_under(run.doc, str(root))


def root_cgroup_procs() -> Path:
    return Path(h.cgroup2_mount()) / "cgroup.procs"


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_a_process_that_leaves_its_cgroup_is_still_recorded(recorder, workspace, tmp_path):
    (workspace / "secret").write_text("s\n")
    run = trace(recorder, ["/bin/sh", "-c", f"echo $$ > {root_cgroup_procs()} && cat secret"], workspace, tmp_path)
    assert run.returncode == 0, run.describe()
    assert run.doc["complete"] is True, run.doc["incompleteReasons"]
    assert "secret" in files(run, workspace)["read"], run.describe()


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_a_process_that_left_its_cgroup_ends_with_the_command(recorder, workspace, tmp_path):
    pid_file = workspace / "escaped.pid"
    escape = (f"echo $$ > {root_cgroup_procs()} && echo $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file} && "
              "exec sleep 300")
    command = ["/bin/sh", "-c", f"/bin/sh -c '{escape}' & while [ ! -e {pid_file} ]; do sleep 0.01; done"]
    run = trace(recorder, command, workspace, tmp_path)
    assert run.returncode == 0, run.describe()
    escaped = int(pid_file.read_text())
    assert not alive(escaped), "a process that moved out of the task's cgroup outlived the command"
    assert escaped in run.processes(), "the escaped process is not in the recording"


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_a_regular_file_made_by_mknod_is_created(recorder, workspace, tmp_path):
    command = [PY, "-c", "import os, stat; os.mknod('made', 0o644 | stat.S_IFREG); "
                         "os.mknod('made_at', 0o644 | stat.S_IFREG, dir_fd=os.open('.', os.O_RDONLY))"]
    run = trace(recorder, command, workspace, tmp_path)
    assert run.returncode == 0, run.describe()
    assert {"made", "made_at"} <= files(run, workspace)["created"], run.describe()


CHROOTED = ("import os; os.chroot('jail'); open('/t').read(); os.mkdir('/made'); "
            "os.open('/missing', os.O_RDONLY) if False else None")


def test_a_chrooted_process_is_recorded_at_the_real_paths_by_ebpf(workspace, tmp_path):
    (workspace / "jail").mkdir()
    (workspace / "jail" / "t").write_text("t\n")
    run = trace("ebpf", [PY, "-c", CHROOTED], workspace, tmp_path)
    assert run.returncode == 0, run.describe()
    got = files(run, workspace)
    assert "jail/t" in got["read"] and "jail/made" in got["created"], run.describe()
    assert not any(p in ("/t", "/made") for k in ("read", "created") for p in run.doc["files"][k])
    assert run.doc["complete"] is True, run.doc["incompleteReasons"]


def test_a_chroot_under_strace_makes_the_recording_incomplete(workspace, tmp_path):
    (workspace / "jail").mkdir()
    (workspace / "jail" / "t").write_text("t\n")
    run = trace("strace", [PY, "-c", CHROOTED], workspace, tmp_path)
    assert run.returncode == 0, run.describe()
    assert run.doc["complete"] is False
    assert any("changed its root directory (chroot)" in r for r in run.doc["incompleteReasons"]), run.doc


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_a_mount_of_the_tasks_own_makes_the_recording_incomplete(recorder, workspace, tmp_path):
    (workspace / "src").mkdir()
    (workspace / "src" / "f").write_text("f\n")
    (workspace / "alias").mkdir()
    command = ["unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
               "mount --bind src alias && cat alias/f"]
    run = trace(recorder, command, workspace, tmp_path)
    assert run.returncode == 0, run.describe()
    assert run.doc["complete"] is False, "a read through a bind mount was recorded under its alias as complete"
    assert any("called mount" in r for r in run.doc["incompleteReasons"]), run.doc["incompleteReasons"]


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_a_copy_of_the_mount_tree_alone_changes_no_path(recorder, workspace, tmp_path):
    (workspace / "f").write_text("f\n")
    run = trace(recorder, ["unshare", "-m", "cat", "f"], workspace, tmp_path)
    assert run.returncode == 0, run.describe()
    assert "f" in files(run, workspace)["read"]
    reasons = [r for r in run.doc.get("incompleteReasons", []) if "called" in r]
    assert reasons == [], reasons
