"""What a qk killed outright (SIGKILL: an OOM kill, `timeout -s KILL`, a CI runner giving up) leaves
behind: its guardian kills the task processes at once, so none lives on to write into outputs that the
next run would store; the next run removes the cgroups and strace FIFOs, and kills what a guardian
killed with qk could not. Cgroups are told apart by a lock their owner holds, never by a pid, so
several qk runs at once on one machine (in pid namespaces or not) never touch each other's tasks."""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import signal
import subprocess
from pathlib import Path

import pytest

import qk_harness as h
from audit_workspace import QK, make_workspace, qk
from test_interrupt import alive, task_cgroup_of, wait_for


def start_traced_sleeper(recorder: str, workspace: Path, json_path: Path, env: dict) -> tuple[subprocess.Popen, int]:
    pid_file = workspace / "pid"
    proc = subprocess.Popen(
        [str(h.QK_TRACE), "--recorder", recorder, "--json", str(json_path), "--",
         "/bin/sh", "-c", f"echo $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file} && exec sleep 300"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wait_for(pid_file.exists, "the traced command to start")
    return proc, int(pid_file.read_text())


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_a_killed_qk_trace_leaves_nothing_running_and_the_next_run_cleans_up(recorder, workspace, json_path,
                                                                              tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    proc, command_pid = start_traced_sleeper(recorder, workspace, json_path, env)
    cgroup = task_cgroup_of(command_pid)
    proc.kill()
    proc.wait(timeout=60)
    wait_for(lambda: not alive(command_pid), "the guardian to kill the traced command", timeout=10)
    fifos = sorted(tmp.glob("qk-strace-*"))
    if recorder == "strace":
        assert fifos, "precondition: SIGKILL gives qk-trace no chance to remove strace's FIFO"

    run = subprocess.run([str(h.QK_TRACE), "--recorder", recorder, "--json", str(json_path), "--", "/bin/true"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert cgroup is None or not cgroup.exists(), "the next run did not remove the killed run's cgroup"
    assert sorted(tmp.glob("qk-strace-*")) == [], "the next run did not remove the killed run's FIFO"


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line holds `text`, by host pid (enforce runs tasks in a pid
    namespace, where the pid a task sees is not the host's)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if text.encode() in (entry / "cmdline").read_bytes() and alive(int(entry.name)):
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def poisoning_workspace(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A build that writes `start`, then leaves a process that appends `end` once `go` exists."""
    bg, go = tmp_path / "bg.pid", tmp_path / "go"
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "app", "targets": {"build": {
        "command": ("mkdir -p app/dist && echo start > app/dist/out && "
                    f"sh -c 'echo $$ > {bg}.tmp && mv {bg}.tmp {bg}; "
                    f"while [ ! -e {go} ]; do sleep 0.05; done; echo end >> app/dist/out' & wait"),
        "outputs": ["{projectRoot}/dist"]}}}}, files={"app/src.txt": "x\n"})
    return ws, bg, go


@pytest.mark.privileged("ebpf")
@pytest.mark.parametrize("mode", ["plain", "audit", "enforce"])
def test_a_killed_run_leaves_no_task_running_to_poison_the_cache(mode, tmp_path):
    ws, bg, go = poisoning_workspace(tmp_path)
    args = [str(QK), "run-many", "-t", "build"] + ([] if mode == "plain" else [f"--sandbox={mode}"])
    first = subprocess.Popen(args, cwd=ws, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(bg.exists, "the task's background process to start", timeout=60)
    assert processes_mentioning(str(go)), "precondition: the background process runs"
    first.kill()
    first.wait(timeout=60)
    wait_for(lambda: not processes_mentioning(str(go)), "the killed run's task process to die", timeout=10)

    go.touch()  # a process of the killed run still alive would now append to the output
    r = qk(ws, *args[1:])
    assert r.returncode == 0, r.stdout + r.stderr
    out = ws / "app" / "dist" / "out"
    assert out.read_text() == "start\nend\n"
    out.unlink()
    r = qk(ws, *args[1:])
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_text() == "start\nend\n", "the cache stored an output another process was writing"


def make_cgroup(parent: Path) -> tuple[Path, subprocess.Popen]:
    cg = parent / f"trace-{secrets.token_hex(8)}"
    cg.mkdir()
    sleeper = subprocess.Popen(["sleep", "300"])
    (cg / "cgroup.procs").write_text(str(sleeper.pid))
    return cg, sleeper


@pytest.mark.privileged()
def test_the_next_run_kills_what_a_killed_guardian_left_and_spares_live_owners(tmp_path):
    parent = Path(h.cgroup2_mount()) / "qk"
    parent.mkdir(exist_ok=True)
    stale, orphan = make_cgroup(parent)       # its qk and guardian are gone: nobody holds its lock
    held, owned = make_cgroup(parent)         # its owner lives and holds the lock, whatever its pid
    lock = os.open(held, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        ws = make_workspace(tmp_path / "ws", {"app": {"root": ".", "targets": {"quick": {"command": "true"}}}})
        r = qk(ws, "run-many", "-t", "quick")  # not even sandboxed: every run clears what could write
        assert r.returncode == 0, r.stdout + r.stderr
        assert "qk: killed 1 process that an earlier, killed qk run left running\n" in r.stdout, r.stdout
        assert orphan.wait(timeout=10) == -9
        assert not stale.exists()
        assert held.exists() and owned.poll() is None, "a cgroup whose owner lives was touched"
    finally:
        owned.kill()
        owned.wait()
        os.close(lock)
        held.rmdir()


def guardians_of(ws: Path) -> list[int]:
    """The guardians of the qk runs started in `ws`: a guardian is forked from qk, so it keeps qk's
    working directory (and no other qk on the machine, in another test or worktree, has this one)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if (entry.name.isdigit() and (entry / "comm").read_text().strip() == "qk-guardian"
                    and os.readlink(entry / "cwd") == str(ws) and alive(int(entry.name))):
                pids.append(int(entry.name))
        except OSError:
            pass
    return pids


def cgroup_pids(cgroup: Path) -> list[int]:
    """The processes in a cgroup and the cgroups below it."""
    pids = []
    for procs in cgroup.rglob("cgroup.procs"):  # its own first
        pids += [int(p) for p in procs.read_text().split()]
    return pids


def start_blocked_tasks(tmp_path: Path, recorder: str, command: str, tasks: int):
    """A `qk run-many --sandbox` of `tasks` tasks, each running `command` (with {started} the file it
    must write its shell's pid to, {fifo} a FIFO nobody writes): returns qk, the workspace, the tasks'
    pids and their cgroups, once every task runs."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = [tmp_path / f"started{i}" for i in range(tasks)]
    ws = make_workspace(tmp_path / "ws", {
        **{f"p{i}": {"root": f"p{i}", "targets": {"block": {"command": command.format(started=started[i], fifo=fifo)}}}
           for i in range(tasks)},
        "quick": {"root": "quick", "targets": {"quick": {"command": "true"}}}})
    proc = subprocess.Popen([str(QK), "run-many", "-t", "block", "--sandbox", "--parallel", str(tasks)], cwd=ws,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, QK_RECORDER=recorder))
    wait_for(lambda: all(f.exists() and f.read_text().strip() for f in started), "the tasks to start", timeout=60)
    pids = [int(f.read_text()) for f in started]
    cgroups = [task_cgroup_of(pid) for pid in pids]
    assert None not in cgroups and len(set(cgroups)) == tasks, f"precondition: a task cgroup each: {cgroups}"
    return proc, ws, pids, cgroups


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_the_guardian_of_a_killed_run_removes_its_task_cgroups_and_the_next_run_says_nothing(recorder, tmp_path):
    proc, ws, pids, cgroups = start_blocked_tasks(
        tmp_path, recorder, "echo $$ > {started}.tmp && mv {started}.tmp {started} && cat {fifo}", tasks=2)
    guardians = guardians_of(ws)
    assert len(guardians) == 1, f"precondition: the run has one guardian: {guardians}"
    proc.kill()
    proc.wait(timeout=60)
    wait_for(lambda: not alive(guardians[0]), "the guardian to finish", timeout=30)
    assert [pid for pid in pids if alive(pid)] == [], "the killed run's tasks still run"
    assert [cg for cg in cgroups if cg.exists()] == [], "the guardian left the killed run's task cgroups"

    r = qk(ws, "run-many", "-t", "quick", "--sandbox", recorder=recorder)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "killed" not in r.stdout and "earlier" not in r.stdout, r.stdout


@pytest.mark.privileged("ebpf")
def test_the_next_run_counts_the_processes_a_killed_run_and_its_guardian_left(tmp_path):
    """The guardian killed first, then qk: the task and the daemon it started live on in their cgroup,
    and the next run kills them, saying how many processes there were."""
    daemon = tmp_path / "daemon.pid"
    command = (f"setsid sh -c 'echo $$ > {daemon}; exec sleep 300' & "
               f"while [ ! -s {daemon} ]; do sleep 0.01; done; ") + \
        "echo $$ > {started}.tmp && mv {started}.tmp {started} && cat {fifo}"
    proc, ws, pids, (cgroup,) = start_blocked_tasks(tmp_path, "ebpf", command, tasks=1)
    guardians = guardians_of(ws)
    assert len(guardians) == 1, f"precondition: the run has one guardian: {guardians}"
    os.kill(guardians[0], signal.SIGKILL)
    wait_for(lambda: not alive(guardians[0]), "the guardian to die")
    proc.kill()
    proc.wait(timeout=60)
    left = cgroup_pids(cgroup)
    daemon_pid = int(daemon.read_text())
    assert daemon_pid in left and pids[0] in left, f"precondition: the task and its daemon live on: {left}"

    r = qk(ws, "run-many", "-t", "quick")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"qk: killed {len(left)} processes that an earlier, killed qk run left running\n" in r.stdout, \
        (left, r.stdout)
    assert [pid for pid in left if alive(pid)] == [], "the next run left the killed run's processes running"
    assert not cgroup.exists()
    r = qk(ws, "run-many", "-t", "quick")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "killed" not in r.stdout, r.stdout


def trace_argv(recorder: str, root: Path, json_path: Path) -> list[str]:
    script = "for i in $(seq 1 40); do cat input > /dev/null; echo $i > out.$i; done"
    return [str(h.QK_TRACE), "--recorder", recorder, "--json", str(json_path), "-C", str(root), "--",
            "/bin/sh", "-c", script]


@pytest.mark.privileged("ebpf")
def test_many_qk_runs_at_once_never_disturb_each_other(tmp_path):
    """Sandboxed runs and qk-traces under both recorders, one of them in a pid namespace of its own
    (where pids repeat the host's), all at once: every one finishes, complete and audited."""
    h.require_privileges("strace")
    runs = []
    for n in range(3):
        ws = make_workspace(tmp_path / f"ws{n}", {f"p{i}": {"root": f"p{i}", "targets": {"build": {
            "command": "for i in $(seq 1 40); do cat p%d/src.txt > /dev/null; done; mkdir -p p%d/dist; "
                       "echo ok > p%d/dist/out" % (i, i, i),
            "outputs": ["{projectRoot}/dist"]}}} for i in range(4)},
            files={f"p{i}/src.txt": "x\n" for i in range(4)})
        report = tmp_path / f"report{n}.json"
        runs.append(("run-many", report, subprocess.Popen(
            [str(QK), "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report), "--parallel", "4"],
            cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    for n, (recorder, prefix) in enumerate([("ebpf", []), ("strace", []), ("ebpf", ["unshare", "-pf"]),
                                            ("strace", ["unshare", "-pf"])]):
        root = tmp_path / f"trace{n}"
        root.mkdir()
        (root / "input").write_text("x\n")
        doc = tmp_path / f"trace{n}.json"
        runs.append(("trace", doc, subprocess.Popen(prefix + trace_argv(recorder, root, doc), stdout=subprocess.PIPE,
                                                    stderr=subprocess.STDOUT, text=True)))
    for kind, doc_path, proc in runs:
        out = proc.communicate(timeout=300)[0]
        assert proc.returncode == 0, f"{proc.args}:\n{out}"
        doc = json.loads(doc_path.read_text())
        if kind == "trace":
            assert doc["complete"] is True, doc.get("incompleteReasons")
            assert doc["exitCode"] == 0
        else:
            statuses = [t["status"] for t in doc["tasks"].values()]
            assert statuses == ["audited"] * 4, out
            assert "not audited" not in out and "SIGKILL" not in out, out
