"""One helper serves a run's enforced commands (issue 40, src/sandbox_exec/server.hpp): with the eBPF recorder,
each command's qk-sandbox-exec is a child of the run's `qk-sandbox-exec --serve`, not of qk, and there is one
such server a run; with QK_SANDBOX_SERVE=0 qk execs a helper for each command, as before. The two leave the
same workspace and report (test_modes_agree.py runs the whole corpus both ways). Under strace, whose tracer
must be the helper's parent, qk execs a helper each and starts no server. A run killed outright
leaves no helper, server or command behind, and nothing of it reaches the next run's cache."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import qk_harness as h
from audit_workspace import make_workspace, qk
from test_interrupt import alive, wait_for
from test_leftovers import processes_mentioning

pytestmark = pytest.mark.privileged("ebpf")

QK = h.BUILD_DIR / "qk"


def blocking_workspace(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A build that says it started (`started`), then waits for `go` before it writes its output."""
    started, go = tmp_path / "started", tmp_path / "go"
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "app", "targets": {"build": {
        "command": (f"touch {started}; while [ ! -e {go} ]; do sleep 0.02; done; "
                    "mkdir -p app/dist && echo built > app/dist/out"),
        "outputs": ["{projectRoot}/dist"]}}}}, files={"app/src.txt": "x\n"})
    return ws, started, go


def cmdline(pid: int) -> list[str]:
    return [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]]


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def chain_to(qk_pid: int, pid: int) -> list[int]:
    """pid's ancestors up to qk's child (outermost last), or [] when qk is not among them."""
    chain = []
    while pid > 1:
        up = parent(pid)
        chain.append(pid)
        if up == qk_pid:
            return chain
        pid = up
    return []


def is_helper(pid: int) -> bool:
    return Path(f"/proc/{pid}/exe").resolve().name == "qk-sandbox-exec"


def commands() -> list[int]:
    """The run's command (its `sh -c`; an exec'd helper's command line names it too)."""
    return [p for p in processes_mentioning("while [ ! -e") if not is_helper(p)]


def sockets(pid: int) -> list[str]:
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            out.append(f"{fd} {target}")
    return out


def helpers_of(qk_pid: int) -> list[list[int]]:
    """For each process of the run's command, the qk-sandbox-exec processes between it and qk, innermost
    first."""
    out = []
    for pid in commands():
        chain = [p for p in chain_to(qk_pid, pid) if is_helper(p)]
        if chain:
            out.append(chain)
    return out


@pytest.mark.parametrize("serve,recorder", [("1", "ebpf"), ("0", "ebpf"), ("1", "strace")])
def test_each_command_s_helper_is_the_servers_child_or_qk_s_own(serve, recorder, tmp_path):
    """Served with eBPF; exec'd with QK_SANDBOX_SERVE=0, and under strace, whose tracer must be the helper's
    parent (no server is started then)."""
    if recorder == "strace":
        h.require_privileges("strace")
    ws, started, go = blocking_workspace(tmp_path)
    env = {**os.environ, "QK_SANDBOX_SERVE": serve, "QK_RECORDER": recorder}
    served = serve == "1" and recorder == "ebpf"
    run = subprocess.Popen([str(QK), "run-many", "-t", "build", "--sandbox=enforce"], cwd=ws, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(started.exists, "the task's command to start", timeout=60)
        chains = helpers_of(run.pid)
        assert chains, "precondition: the command runs under qk"
        for chain in chains:
            outermost = chain[-1]
            if served:
                # qk -> server -> the command's helper -> pid 1 of its namespace -> the command
                assert cmdline(outermost)[1:] == ["--serve"], cmdline(outermost)
                assert len(chain) == 3, [cmdline(p) for p in chain]
            else:
                # qk [-> strace] -> the command's helper (exec'd with its plan) -> pid 1 -> the command
                assert "--" in cmdline(outermost) and "--serve" not in cmdline(outermost), cmdline(outermost)
                assert len(chain) == 2, [cmdline(p) for p in chain]
            # Neither the command's helper nor its pid 1 holds a socket: not the server's channel, nor
            # another command's (this task declares no network, so no proxy's either).
            for p in chain[:2]:
                assert sockets(p) == [], (cmdline(p), sockets(p))
        servers = [p for p in processes_mentioning("--serve") if parent(p) == run.pid]
        assert len(servers) == (1 if served else 0), [cmdline(p) for p in servers]
    finally:
        go.touch()
    out, _ = run.communicate(timeout=120)
    assert run.returncode == 0, out
    assert "Sandbox enforce: 1 task kept to what it declares" in out, out
    assert (ws / "app" / "dist" / "out").read_text() == "built\n"


def test_a_run_killed_outright_leaves_no_helper_server_or_command(tmp_path):
    ws, started, go = blocking_workspace(tmp_path)
    run = subprocess.Popen([str(QK), "run-many", "-t", "build", "--sandbox=enforce"], cwd=ws,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(started.exists, "the task's command to start", timeout=60)
    chains = helpers_of(run.pid)
    assert chains and len(chains[0]) == 3, "precondition: the command runs under the run's helper"
    ours = [p for chain in chains for p in chain] + commands()
    run.kill()
    run.wait(timeout=60)
    wait_for(lambda: not any(alive(p) for p in ours), "the killed run's helpers and command to end", timeout=10)

    go.touch()  # a command of the killed run still alive would now write its output
    r = qk(ws, "run-many", "-t", "build", "--sandbox=enforce")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "app" / "dist" / "out").read_text() == "built\n"


def test_commands_served_side_by_side_hold_no_descriptor_but_their_own_three(tmp_path):
    """The server holds its channel and the sockets of every command it still has to answer: none of them,
    nor anything else of qk's, may reach a command, even one forked while others run."""
    marks = tmp_path / "marks"
    marks.mkdir()
    probe = ("import os\n"
             "open_fds = []\n"
             "for fd in range(3, 4096):\n"
             "    try:\n"
             "        os.fstat(fd)\n"
             "    except OSError:\n"
             "        continue\n"
             "    open_fds.append(f'{fd} {os.readlink(f\"/proc/self/fd/{fd}\")}')\n"
             "print('\\n'.join(open_fds))\n")
    projects = {}
    for name in ("a", "b", "c"):
        # Each waits (up to 60 s) until all three run, so that the last is forked while the others are served.
        projects[name] = {"root": name, "targets": {"build": {
            "command": (f"touch {marks}/{name}; n=0; while [ $(ls {marks} | wc -l) -lt 3 ] && [ $n -lt 3000 ]; "
                        f"do sleep 0.02; n=$((n+1)); done; mkdir -p {name}/dist && "
                        f"python3 -c \"$(cat {name}/probe.py)\" > {name}/dist/fds.txt"),
            "inputs": ["{projectRoot}/**/*"],
            "outputs": ["{projectRoot}/dist"]}}}
    files = {f"{n}/probe.py": probe for n in projects}
    ws = make_workspace(tmp_path / "ws", projects, files=files)
    r = qk(ws, "run-many", "-t", "build", "--sandbox=enforce", "--parallel", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Sandbox enforce: 3 tasks kept to what they declare" in r.stdout, r.stdout
    assert sorted(os.listdir(marks)) == ["a", "b", "c"]
    for name in projects:
        assert (ws / name / "dist" / "fds.txt").read_text() == "\n", (name, (ws / name / "dist" / "fds.txt").read_text())


def test_two_enforced_runs_at_once_each_serve_their_own_commands(tmp_path):
    """Two runs on one machine at the same time: each has its own server, each command's helper is its own
    run's server's child, and both runs keep their tasks to what they declare."""
    runs = []
    try:
        for n in range(2):
            ws, started, go = blocking_workspace(tmp_path / f"run{n}")
            proc = subprocess.Popen([str(QK), "run-many", "-t", "build", "--sandbox=enforce"], cwd=ws,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            runs.append((ws, started, go, proc))
        for _, started, _, _ in runs:
            wait_for(started.exists, "both runs' commands to start", timeout=60)
        servers = []
        for _, _, _, proc in runs:
            chains = helpers_of(proc.pid)  # only what descends from this run's qk
            assert chains and all(len(c) == 3 for c in chains), [[cmdline(p) for p in c] for c in chains]
            mine = {c[-1] for c in chains}
            assert len(mine) == 1 and all(parent(s) == proc.pid for s in mine), mine
            servers += list(mine)
        assert len(set(servers)) == 2, servers
    finally:
        for _, _, go, _ in runs:
            go.touch()
    for ws, _, _, proc in runs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out
        assert "Sandbox enforce: 1 task kept to what it declares" in out, out
        assert (ws / "app" / "dist" / "out").read_text() == "built\n"
