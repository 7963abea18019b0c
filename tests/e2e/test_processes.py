"""Processes: pids, parents, argv and how each ended, as the scenario programs report them on stdout;
exit statuses passed through; leftover daemons killed and counted; the document's header."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import qk_harness as h

RECORDERS = h.RECORDERS


def pids(rec) -> dict[str, int]:
    got = rec.run.stdout_pids()
    assert "pid" in got, "the scenario did not print its pid\n" + rec.run.describe()
    return got


def assert_process(procs: dict, pid: int, **want):
    assert pid in procs, f"pid {pid} is not in processes: {sorted(procs)}"
    p = procs[pid]
    for key, value in want.items():
        if value is None:
            assert key not in p, f"process {pid}: unexpected {key}={p.get(key)!r} in {p}"
        else:
            assert p.get(key) == value, f"process {pid}: {key} is {p.get(key)!r}, want {value!r} ({p})"


@pytest.mark.parametrize("recorder", RECORDERS)
def test_fork_exec(recorder, recorded):
    rec = recorded("fork_exec", recorder)
    rec.check_exit()
    got = pids(rec)
    procs = rec.run.processes()
    assert set(procs) == {got["pid"], got["child1"], got["child2"]}, procs
    assert_process(procs, got["pid"], argv=[rec.program, rec.root], exitCode=0, signal=None)
    assert_process(
        procs, got["child1"], ppid=got["pid"], argv=["/bin/cat", f"{rec.root}/in.txt"], exitCode=0, signal=None
    )
    # A fork that never execs has no argv of its own (Recording: "the last successful exec's, empty if
    # it never exec'd").
    assert_process(procs, got["child2"], ppid=got["pid"], argv=[], exitCode=7, signal=None)


@pytest.mark.parametrize("recorder", RECORDERS)
def test_vfork_exec(recorder, recorded):
    rec = recorded("vfork_exec", recorder)
    rec.check_exit()
    got = pids(rec)
    procs = rec.run.processes()
    assert set(procs) == {got["pid"], got["child"]}, procs
    assert_process(
        procs, got["child"], ppid=got["pid"], argv=["/bin/cat", f"{rec.root}/in.txt"], exitCode=0, signal=None
    )


@pytest.mark.parametrize("recorder", RECORDERS)
def test_clone3(recorder, recorded):
    rec = recorded("clone3", recorder)
    rec.check_exit()
    got = pids(rec)
    procs = rec.run.processes()
    assert set(procs) == {got["pid"], got["child"]}, procs
    assert_process(procs, got["child"], ppid=got["pid"], argv=[], exitCode=3, signal=None)


@pytest.mark.parametrize("recorder", RECORDERS)
def test_threads_are_not_processes(recorder, recorded):
    rec = recorded("threads", recorder)
    rec.check_exit()
    got = pids(rec)
    procs = rec.run.processes()
    assert set(procs) == {got["pid"]}, f"four threads of one process, but processes are {procs}"
    assert_process(procs, got["pid"], argv=[rec.program, rec.root], exitCode=0)


@pytest.mark.parametrize("recorder", RECORDERS)
def test_exec_keeps_the_pid_and_takes_the_new_argv(recorder, recorded):
    rec = recorded("exec_path", recorder)
    rec.check_exit()
    procs = list(rec.run.processes().values())
    assert len(procs) == 1, procs
    assert procs[0]["argv"] == ["tool"] and procs[0].get("exitCode") == 0, procs


@pytest.mark.parametrize("recorder", RECORDERS)
def test_script_argv_is_what_the_kernel_runs(recorder, recorded):
    """After exec of a #! script the process runs the interpreter: its argv is [interpreter, script,
    args...], as /proc/PID/cmdline shows it, under both engines."""
    rec = recorded("exec_script", recorder)
    rec.check_exit()
    procs = list(rec.run.processes().values())
    assert len(procs) == 1, procs
    assert procs[0]["argv"] == ["/bin/sh", f"{rec.root}/script.sh", "arg1"], procs


@pytest.mark.parametrize("recorder", RECORDERS)
def test_killed_by_signal(recorder, recorded):
    """The command kills itself with SIGKILL after its child died of SIGTERM: qk-trace exits 137, the
    document says "signal": "SIGKILL", and the file written before the kill is recorded."""
    rec = recorded("killed", recorder)
    rec.check_exit()  # 137, "signal": "SIGKILL", no exitCode
    got = pids(rec)
    procs = rec.run.processes()
    assert set(procs) == {got["pid"], got["child"]}, procs
    assert_process(procs, got["pid"], signal="SIGKILL", exitCode=None)
    assert_process(procs, got["child"], ppid=got["pid"], signal="SIGTERM", exitCode=None)
    assert rec.files()["created"] == {"before.txt"}


@pytest.mark.parametrize("recorder", RECORDERS)
def test_leftover_daemon_is_killed_and_counted(recorder, recorded):
    """A daemon left in the cgroup (setsid + `sleep 300`) is killed when the command exits: qk-trace
    returns at once with the command's status, counts it, and the daemon is gone."""
    rec = recorded("leftover", recorder)
    rec.check_exit()
    assert rec.run.elapsed < 60, f"qk-trace waited {rec.run.elapsed:.0f}s for the leftover daemon"
    doc = rec.doc
    assert doc["leftoverProcessesKilled"] >= 1, doc["leftoverProcessesKilled"]
    got = pids(rec)
    daemon = got.get("daemon")
    assert daemon, "the scenario did not print the daemon's pid\n" + rec.run.describe()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{daemon}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            break
        if state in ("Z", "X"):
            break
        time.sleep(0.1)
    else:
        os.kill(daemon, 9)
        pytest.fail(f"the leftover daemon {daemon} was still running after qk-trace exited")
    procs = rec.run.processes()
    assert_process(procs, daemon, argv=["sleep", "300"], signal="SIGKILL")


@pytest.mark.parametrize("recorder", RECORDERS)
def test_no_leftovers_counts_zero(recorder, recorded):
    rec = recorded("fork_exec", recorder)
    assert rec.doc["leftoverProcessesKilled"] == 0


@pytest.mark.parametrize("recorder", RECORDERS)
def test_exit_code_passes_through(recorder, qk_trace, workspace, json_path):
    run = h.run_trace(["/bin/sh", "-c", "exit 42"], recorder=recorder, cwd=workspace, json_path=json_path)
    assert run.returncode == 42, run.describe()
    assert run.doc["exitCode"] == 42 and "signal" not in run.doc
    procs = list(run.processes().values())
    assert [p["argv"] for p in procs] == [["/bin/sh", "-c", "exit 42"]], procs
    assert procs[0]["exitCode"] == 42


@pytest.mark.privileged(recorder="ebpf")
def test_document_header_and_auto_recorder(qk_trace, workspace, json_path):
    """Without --recorder, auto picks eBPF where it loads (it does on these machines). The header holds
    the command as given and the -C directory."""
    run = h.run_trace(["/bin/true", "x"], cwd=workspace, json_path=json_path)
    assert run.returncode == 0, run.describe()
    doc = run.doc
    assert doc["schemaVersion"] == 1
    assert doc["recorder"] == "ebpf", "auto must choose eBPF where it loads"
    assert doc["command"] == ["/bin/true", "x"]
    assert doc["cwd"] == str(workspace)
    assert doc["exitCode"] == 0
    assert doc["complete"] is True and doc["incompleteReasons"] == []
    assert "/usr/bin/true" in doc["files"]["read"]


@pytest.mark.parametrize("recorder", RECORDERS)
def test_path_lookup_of_the_command(recorder, qk_trace, workspace, json_path):
    """A command named without a slash is looked up in PATH; the program it finds is read."""
    run = h.run_trace(["true"], recorder=recorder, cwd=workspace, json_path=json_path)
    assert run.returncode == 0, run.describe()
    assert os.path.realpath("/bin/true") in run.doc["files"]["read"]


@pytest.mark.parametrize("recorder", RECORDERS)
def test_failed_exec_changes_no_argv(recorder, recorded):
    """Failed execs (ENOENT, EACCES) leave the process as it was: one process, its own argv."""
    rec = recorded("exec_fail", recorder)
    rec.check_exit()
    procs = list(rec.run.processes().values())
    assert [p["argv"] for p in procs] == [[rec.program, rec.root]], procs


@pytest.mark.parametrize("recorder", RECORDERS)
def test_timings(recorder, scenario_path, workspace, json_path):
    """QK_TRACE_TIMINGS=1 puts one line of where qk-trace's time went on stderr: every phase, in order,
    and the command's own time no longer than the recording that holds it (docs/benchmarks.md uses it)."""
    run = h.run_trace(["sleep", "0.2"], recorder=recorder, cwd=workspace, json_path=json_path,
                      env={"QK_TRACE_TIMINGS": "1"})
    assert run.returncode == 0, run.describe()
    lines = [l for l in run.stderr.splitlines() if l.startswith("qk-trace timings (ms):")]
    assert len(lines) == 1, run.describe()
    fields = lines[0].split(":", 1)[1].split()
    names, values = fields[0::2], [float(v) for v in fields[1::2]]
    assert names == ["load", "record", "of-which-command", "summary", "json", "teardown"], lines[0]
    t = dict(zip(names, values))
    assert 200 <= t["of-which-command"] <= t["record"], lines[0]
    assert all(v >= 0 for v in values), lines[0]
    quiet = h.run_trace(["true"], recorder=recorder, cwd=workspace)
    assert "timings" not in quiet.stderr, quiet.describe()
