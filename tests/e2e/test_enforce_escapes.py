"""--sandbox=enforce against a task trying to get out: every way of reading an undeclared file is refused,
every way of writing outside the outputs is refused (Landlock alone) or not kept (over an overlay), and
nothing it leaves running writes after it ends. Each vector is its own test, run both over an overlay and
under Landlock alone (QK_SANDBOX_OVERLAY=0). docs/sandbox.md counts them."""

from __future__ import annotations

import concurrent.futures
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from audit_workspace import audit_text, sandbox
from enforce_workspace import MODES, SECRET, enforce, escape_workspace, outside_dist, snapshot, target
import qk_harness as h

pytestmark = pytest.mark.privileged

MODE = pytest.mark.parametrize("mode", MODES)
SCENARIOS = h.SCENARIO_DIR


def refused_read(tmp_path: Path, mode: str, command: str, files: dict | None = None, setup=None,
                 recorder: str | None = None):
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)}, files)
    if setup:
        setup(ws)
    before = outside_dist(snapshot(ws))
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode, recorder=recorder)
    task = doc["tasks"]["app:t"]
    assert r.returncode != 0, r.stdout + r.stderr
    assert SECRET not in r.stdout + r.stderr, r.stdout
    assert task["status"] == "enforced", task
    assert outside_dist(snapshot(ws)) == before
    return r, task


# ---------------------------------------------------------------------------------------------------
# Reads


@MODE
@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_a_direct_read_is_refused_and_listed(mode, recorder, tmp_path):
    # Each recorder lists the refused open (recorded with record_denials), so the user sees what to declare.
    r, task = refused_read(tmp_path, mode, "cat other/secret.txt", recorder=recorder)
    # Refused as the spec says, in both modes: over the overlay an unreadable stand-in is there (the read
    # mask), under Landlock alone Landlock refuses the file itself.
    assert "Permission denied" in r.stdout, r.stdout
    assert task["findings"]["refusedReads"] == ["other/secret.txt"], task
    assert "other/secret.txt" in r.stdout[r.stdout.find("Sandbox enforce:"):]


# The ways round a plain open that a recorder resolving paths in qk's own process would misplace: the
# caller's cwd and descriptors through /proc, an O_PATH handle (which Landlock lets through) opened
# again. Each is refused, and the summary names the path, never "kept to what it declares".
PY = f"{sys.executable} -c"
THROUGH = {
    "proc-self-cwd": ("cd src && cat /proc/self/cwd/../other/secret.txt", "other/secret.txt"),
    "o-path-directory": (f"{PY} \"import os; d = os.open('other', os.O_PATH); "
                         f"print(open(f'/proc/self/fd/{{d}}/secret.txt').read())\"", "other/secret.txt"),
    "o-path-reopened": (f"{PY} \"import os; f = os.open('other/secret.txt', os.O_PATH); "
                        f"print(open(f'/proc/thread-self/fd/{{f}}').read())\"", "other/secret.txt"),
    # /dev/fd leads to /proc/self/fd through a link the recorder does not follow in qk: named as spelled.
    "dev-fd": (f"{PY} \"import os; d = os.open('other', os.O_PATH); "
               f"print(open(f'/dev/fd/{{d}}/secret.txt').read())\"", "/dev/fd/3/secret.txt"),
}


@MODE
@pytest.mark.parametrize("way", sorted(THROUGH))
def test_a_read_through_a_descriptor_or_cwd_is_refused_and_named(mode, way, tmp_path):
    command, named = THROUGH[way]
    r, task = refused_read(tmp_path, mode, command)
    summary = r.stdout[r.stdout.find("Sandbox enforce:"):]
    assert "kept to what" not in summary and "no refusal listed" not in summary, summary
    kind = "refusedUnplaced" if named.startswith("/") else "refusedReads"
    assert task["findings"].get(kind) == [named], task
    assert named in summary, summary


@MODE
def test_a_declared_read_is_allowed(mode, tmp_path):
    ws = escape_workspace(tmp_path / "ws", {"t": target("cat src/main.txt && mkdir -p dist && cp src/main.txt dist/")})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    task = doc["tasks"]["app:t"]
    assert {k: task[k] for k in ("status", "findings")} == {"status": "enforced", "findings": {}}, task
    # Held by Landlock alone qk made dist for it, so its result is not cached, and the report says why.
    assert ("qk made its output dist" in task.get("reason", "")) == (mode == "landlock"), task
    assert (ws / "dist" / "main.txt").read_text() == "main\n"


@MODE
def test_a_read_through_dotdot_is_refused(mode, tmp_path):
    refused_read(tmp_path, mode, "cat src/../other/secret.txt")


@MODE
def test_a_read_through_a_symbolic_link_is_refused(mode, tmp_path):
    refused_read(tmp_path, mode, "cat src/link", setup=lambda ws: os.symlink("../other/secret.txt", ws / "src/link"))


@MODE
def test_a_hard_link_made_to_read_is_refused(mode, tmp_path):
    refused_read(tmp_path, mode, "mkdir -p dist && ln other/secret.txt dist/h; cat dist/h")


@MODE
def test_a_read_through_proc_self_root_is_refused(mode, tmp_path):
    refused_read(tmp_path, mode, 'cat "/proc/self/root$PWD/other/secret.txt"')


@MODE
def test_a_read_through_proc_self_cwd_is_refused(mode, tmp_path):
    refused_read(tmp_path, mode, "cd other && cat /proc/self/cwd/secret.txt")


@MODE
def test_an_o_path_descriptor_reopened_through_proc_self_fd_is_refused(mode, tmp_path):
    refused_read(tmp_path, mode, "python3 -c \"import os; fd = os.open('other/secret.txt', os.O_PATH); "
                                 "print(open('/proc/self/fd/%d' % fd).read())\"")


@MODE
def test_a_bind_mount_in_a_namespace_of_its_own_is_refused(mode, tmp_path):
    refused_read(tmp_path, mode, "unshare -Urm sh -c 'mount --bind other/secret.txt src/main.txt && cat src/main.txt'")


@MODE
def test_a_read_through_a_link_beside_the_workspace_is_refused(mode, tmp_path):
    # Everything outside the workspace is open, but not the workspace through a link that leads back to it.
    os.symlink("ws", tmp_path / "alias")
    refused_read(tmp_path, mode, f"cat {tmp_path}/alias/other/secret.txt")


@MODE
@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_io_uring_is_refused_and_the_refusal_named(mode, recorder, tmp_path):
    # The scenario opens <dir>/uring.txt with IORING_OP_OPENAT, never through openat(2), whose open no
    # recorder sees: enforce refuses io_uring itself (ENOSYS, as a kernel without it), and says so.
    r, task = refused_read(tmp_path, mode, f"{SCENARIOS / 'io_uring_open'} other",
                           files={"other/uring.txt": SECRET + "\n"}, recorder=recorder)
    summary = r.stdout[r.stdout.find("Sandbox enforce:"):]
    assert "kept to what" not in summary, summary
    if recorder == "strace":
        # strace's own seccomp filter yields to the refusal: the call never reaches it. The task is named
        # as failed with no refusal listed, not as one that kept to its declarations.
        assert task["findings"] == {}, task
        assert "1 of 1 task failed with no refusal listed" in summary, summary
        return
    assert task["findings"] == {"refusedCalls": ["io_uring_setup"]}, task
    assert "refused io_uring_setup" in summary, summary


@MODE
def test_a_task_that_falls_back_from_io_uring_lists_nothing(mode, tmp_path):
    # libuv (every node process) tries io_uring_setup and falls back to plain calls when refused: a task
    # that succeeded kept to its declarations, and a 47-task workspace is not told all 47 went beyond.
    command = (f"{PY} \"import ctypes, os; e = ctypes.CDLL(None, use_errno=True); "
               f"assert e.syscall(425, 8, None) == -1 and ctypes.get_errno() == 38; "
               f"os.makedirs('dist', exist_ok=True); open('dist/out.txt', 'w').write('plain')\"")
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist" / "out.txt").read_text() == "plain"
    assert doc["tasks"]["app:t"].get("findings", {}) == {}, doc["tasks"]["app:t"]
    assert "1 task kept to what it declares" in r.stdout, r.stdout


# ---------------------------------------------------------------------------------------------------
# Writes: refused as they happen under Landlock alone; over an overlay, done in the upper layer and not
# kept. Either way the workspace outside the outputs is as it was.


def stray_write(tmp_path: Path, mode: str, command: str, files: dict | None = None, setup=None):
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)}, files)
    if setup:
        setup(ws)
    before = outside_dist(snapshot(ws))
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    task = doc["tasks"]["app:t"]
    assert task["status"] == "enforced", task
    assert outside_dist(snapshot(ws)) == before, r.stdout
    if mode == "landlock":
        assert r.returncode != 0, r.stdout + r.stderr
    elif task["findings"].get("discardedWrites"):
        assert "not kept" in r.stdout, r.stdout
    else:
        # Over a read mask a file the task may not read is not in its view: it cannot reach it to write.
        assert task["findings"].get("refusedReads") and r.returncode != 0, task
    return r, task


@MODE
def test_writing_a_new_file_outside_the_outputs(mode, tmp_path):
    r, task = stray_write(tmp_path, mode, "echo stray > stray.txt")
    if mode == "overlay":
        assert task["findings"]["discardedWrites"] == ["stray.txt"], task
    else:
        assert task["findings"].get("refusedWrites") == ["stray.txt"], task


@MODE
def test_replacing_an_input(mode, tmp_path):
    stray_write(tmp_path, mode, "echo evil > src/main.txt")


@MODE
def test_renaming_outside_the_outputs(mode, tmp_path):
    stray_write(tmp_path, mode, "mv src/main.txt src/moved.txt")


@MODE
def test_renameat2_exchange_outside_the_outputs(mode, tmp_path):
    files = {"other/ex/x.txt": "x\n", "other/ex/y.txt": "y\n", "other/ex/dirx/in.txt": "d\n", "other/ex/filey": "f\n"}
    stray_write(tmp_path, mode, f"{SCENARIOS / 'rename_exchange'} other/ex", files=files)


@MODE
def test_a_hard_link_outside_the_outputs(mode, tmp_path):
    stray_write(tmp_path, mode, "ln src/main.txt hard.txt")


@MODE
def test_a_symbolic_link_outside_the_outputs(mode, tmp_path):
    stray_write(tmp_path, mode, "ln -s /etc/passwd sym")


@MODE
def test_truncating_outside_the_outputs(mode, tmp_path):
    stray_write(tmp_path, mode, "truncate -s 0 other/secret.txt")


@MODE
def test_chmod_outside_the_outputs(mode, tmp_path):
    # chmod is no Landlock right: over an overlay the change is not kept; under Landlock alone it lands
    # (a limit docs/sandbox.md states).
    ws = escape_workspace(tmp_path / "ws", {"t": target("chmod 600 src/main.txt")})
    before = outside_dist(snapshot(ws))
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    if mode == "overlay":
        assert outside_dist(snapshot(ws)) == before, r.stdout
        assert doc["tasks"]["app:t"]["findings"]["discardedWrites"] == ["src/main.txt"]
    else:
        # Landlock has no right for file modes: the change lands, as docs/sandbox.md says.
        assert r.returncode == 0, r.stdout + r.stderr


@MODE
def test_mkdir_outside_the_outputs(mode, tmp_path):
    stray_write(tmp_path, mode, "mkdir newdir")


@MODE
def test_writing_through_a_symbolic_link_placed_in_an_output(mode, tmp_path):
    r, task = stray_write(tmp_path, mode, "mkdir -p dist && ln -s ../other dist/out && echo pwned > dist/out/pwned.txt")
    assert not (tmp_path / "ws" / "other" / "pwned.txt").exists()


@MODE
@pytest.mark.parametrize("detach", ["background", "setsid"])
def test_a_daemon_left_running_cannot_write_after_the_task_ends(mode, detach, tmp_path):
    marker = f"qk-enforce-daemon-{os.getpid()}-{mode}-{detach}"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # The daemon blocks on a FIFO nobody writes, then would write into the outputs and outside them. With
    # setsid it leaves the task's session and process group, so only the task's cgroup still holds it.
    start = "setsid -f " if detach == "setsid" else ""
    command = (f"mkdir -p dist && ({start}sh -c 'cat {fifo} >/dev/null; echo late > dist/late.txt; "
               f"echo late > late.txt' {marker} &) ; echo done > dist/done.txt")
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    # Whatever it started is gone with the task: no process of it is left to write.
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"processes left running: {left.stdout}"
    # Unblocking the FIFO now reaches nobody (opening it for writing would block with no reader).
    fd = None
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        assert e.errno == 6, e  # ENXIO: no reader
    finally:
        if fd is not None:
            os.close(fd)
    assert fd is None, "the daemon is still reading its FIFO"
    assert (ws / "dist" / "done.txt").read_text() == "done\n"
    assert not (ws / "dist" / "late.txt").exists() and not (ws / "late.txt").exists()


# ---------------------------------------------------------------------------------------------------
# qk's own machinery and the host (issue 25)


@MODE
def test_the_cache_cannot_be_written(mode, tmp_path):
    # A forged entry in .qk/cache would be restored later as another task's result.
    ws = escape_workspace(tmp_path / "ws", {"t": target("mkdir -p dist; echo forged > .qk/cache/forged; "
                                                       "touch .qk/cache/forged-2 2>/dev/null; true")})
    (ws / ".qk" / "cache").mkdir(parents=True, exist_ok=True)
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert not (ws / ".qk" / "cache" / "forged").exists(), r.stdout + r.stderr
    assert not (ws / ".qk" / "cache" / "forged-2").exists(), r.stdout + r.stderr
    # Refused with EACCES by Landlock alone, EROFS by the overlay's read-only bind: listed either way, as
    # a write into qk's cache with nothing to declare (the task went on, so it is not told to declare it).
    refused = doc["tasks"]["app:t"]["findings"].get("refusedWrites", [])
    assert ".qk/cache/forged" in refused, doc["tasks"]["app:t"]
    summary = r.stdout[r.stdout.find("Sandbox enforce:"):]
    assert "refused in qk's cache, which is read-only to every task; nothing to declare:" in summary, summary
    assert '"outputs"' not in summary, summary


@MODE
def test_no_sandbox_directory_can_be_reached(mode, tmp_path):
    # Every run's upper layers lie under the sandbox base: a task lists and writes there to reach them.
    base = tmp_path / "sandboxes"
    base.mkdir()
    other = base / "other-run" / "cmd-1" / "upper"  # not named run-*: qk would clear it as left by a killed run
    other.mkdir(parents=True)
    (other / "copy.txt").write_text(SECRET)
    command = (f"mkdir -p dist; cat {other}/copy.txt; ls -R {base}; echo pwned > {other}/pwned.txt; "
               f"echo pwned > {base}/pwned.txt; true")
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode, env={"QK_SANDBOX_DIR": str(base)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert SECRET not in r.stdout + r.stderr, r.stdout
    if mode == "overlay":  # covered: not even listed (Landlock alone never holds listing)
        assert not re.search(r"^app:t +\| other-run$", r.stdout, re.M), r.stdout
    assert not (other / "pwned.txt").exists() and not (base / "pwned.txt").exists()


def two_runs(top: Path, searched: list[Path]) -> tuple[Path, Path]:
    """Workspaces of runs A and B, syncing through top/sync: B's task marks b-started and waits for
    a-done before it writes dist/b.txt; A's task marks a-started, waits for b-started, writes into every
    upper layer it finds under `searched` (saying "wrote"), then marks a-done."""
    sync = top / "sync"
    sync.mkdir()
    wait_for = "while [ ! -e {0} ]; do sleep 0.02; done"
    where = " ".join(str(p) for p in searched)
    b_ws = escape_workspace(top / "b", {"t": target(
        f"mkdir -p dist; touch {sync}/b-started; {wait_for.format(sync / 'a-done')}; echo b > dist/b.txt",
        cache=True)})
    a_ws = escape_workspace(top / "a", {"t": target(
        f"mkdir -p dist; touch {sync}/a-started; {wait_for.format(sync / 'b-started')}; "
        f"for d in $(find {where} -type d -name upper 2>/dev/null); do mkdir -p $d/dist; "
        f"echo pwned > $d/dist/pwned.txt && echo \"wrote $d\"; done; "
        f"ls -laR {where} > dist/seen.txt 2>&1; touch {sync}/a-done; true")})
    return a_ws, b_ws


@MODE
def test_another_runs_upper_layer_cannot_be_reached(mode, tmp_path):
    # Run B (its own QK_SANDBOX_DIR, over the overlay) holds its task until run A's task has looked for
    # B's upper layers by path and written into every one it found. B must apply, cache and restore only
    # what its own task wrote.
    base_b = tmp_path / "sandboxes-b"
    a_ws, b_ws = two_runs(tmp_path, [base_b])
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        b = pool.submit(enforce, b_ws, "t", tmp_path / "b.json", env={"QK_SANDBOX_DIR": str(base_b)})
        ra, _ = enforce(a_ws, "t", tmp_path / "a.json", mode=mode,
                        env={"QK_SANDBOX_DIR": str(tmp_path / "sandboxes-a")})
        rb, doc_b = b.result(timeout=120)
    assert ra.returncode == 0 and rb.returncode == 0, ra.stdout + ra.stderr + rb.stdout + rb.stderr
    assert "wrote " not in ra.stdout, ra.stdout
    assert sorted(p.name for p in (b_ws / "dist").iterdir()) == ["b.txt"], (a_ws / "dist" / "seen.txt").read_text()
    # B's result was cached as what its task wrote: restored without the planted file.
    shutil.rmtree(b_ws / "dist")
    rb2, doc_b2 = enforce(b_ws, "t", tmp_path / "b2.json", env={"QK_SANDBOX_DIR": str(base_b)})
    assert doc_b2["tasks"]["app:t"]["status"] == "restored", rb2.stdout
    assert sorted(p.name for p in (b_ws / "dist").iterdir()) == ["b.txt"]


NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


@MODE
@pytest.mark.parametrize("base_b_was", ["new", "used-before"])
def test_another_runs_upper_layer_cannot_be_reached_without_root(mode, base_b_was):
    # As above, but qk runs as an ordinary user: every run's layers then belong to the user every task
    # runs as, and only covers keep them apart. B's QK_SANDBOX_DIR is one A cannot know of when it starts
    # (new: B falls back to where every run keeps its commands from) or one a run has used before (A's
    # commands are kept from it, from the registry).
    if shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is not installed")
    if os.geteuid() != 0:
        h.skip_or_fail("switching to an ordinary user needs root")
    nobody = pwd.getpwnam("nobody")
    top = Path(tempfile.mkdtemp(prefix="qk-escape-user-"))
    try:
        os.chmod(top, 0o755)
        sync, base_b, home = top / "sync", top / "sandboxes-b", top / "home"
        a_ws, b_ws = two_runs(top, [base_b, Path(f"/var/tmp/qk-sandbox-{nobody.pw_uid}"), home])
        home.mkdir()
        for dirpath, dirnames, filenames in os.walk(top):
            for name in [dirpath, *[os.path.join(dirpath, n) for n in dirnames + filenames]]:
                os.lchown(name, nobody.pw_uid, nobody.pw_gid)
        env = {"HOME": str(home), "XDG_CACHE_HOME": ""}

        def run_b(report: str):
            return enforce(b_ws, "t", home / report, env={**env, "QK_SANDBOX_DIR": str(base_b)}, prefix=NOBODY)

        if base_b_was == "used-before":
            (sync / "a-done").touch()
            first, _ = run_b("b0.json")
            assert first.returncode == 0, first.stdout + first.stderr
            (sync / "a-done").unlink()
            (sync / "b-started").unlink()
            shutil.rmtree(b_ws / "dist")
            shutil.rmtree(b_ws / ".qk" / "cache")
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            a = pool.submit(enforce, a_ws, "t", home / "a.json", mode=mode, prefix=NOBODY,
                            env={**env, "QK_SANDBOX_DIR": str(top / "sandboxes-a")})
            # B starts once A's task runs: A's commands are out before B picks where its layers go.
            while not (sync / "a-started").exists():
                assert not a.done(), a.result()[0].stdout
                time.sleep(0.02)
            rb, _ = run_b("b.json")
            ra, _ = a.result(timeout=120)
        assert ra.returncode == 0 and rb.returncode == 0, ra.stdout + ra.stderr + rb.stdout + rb.stderr
        assert "wrote " not in ra.stdout, ra.stdout
        assert sorted(p.name for p in (b_ws / "dist").iterdir()) == ["b.txt"], (a_ws / "dist" / "seen.txt").read_text()
        fell_back = "keeps its sandboxes in" in rb.stdout + rb.stderr
        assert fell_back == (base_b_was == "new"), rb.stdout + rb.stderr
        shutil.rmtree(b_ws / "dist")
        (sync / "a-done").touch()
        rb2, doc_b2 = run_b("b2.json")
        assert doc_b2["tasks"]["app:t"]["status"] == "restored", rb2.stdout
        assert sorted(p.name for p in (b_ws / "dist").iterdir()) == ["b.txt"]
    finally:
        shutil.rmtree(top, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------
# What git runs and what was installed (issue 38): read-only under enforce, the rest of .git and
# node_modules open as the spec says.


def git_workspace(tmp_path: Path, command: str, cache: bool = False) -> Path:
    ws = escape_workspace(tmp_path / "ws", {"t": target(command, cache=cache)})
    # dist is there before the run: qk makes no output for the task, so Landlock alone caches it too.
    (ws / "dist").mkdir()
    (ws / "dist" / "keep.txt").write_text("kept\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=qk", "-c", "user.email=qk@example.com",
                                                  "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)
    return ws


def git_machinery(ws: Path) -> dict:
    git = ws / ".git"
    return {"config": (git / "config").read_bytes(), "hooks": sorted(os.listdir(git / "hooks")),
            "commondir": (git / "commondir").exists(), "config.worktree": (git / "config.worktree").exists()}


# Each way a task could make git run its code: (command, the path the refusal names).
GIT_MACHINERY = {
    "git-config-fsmonitor": ("git config core.fsmonitor 'touch {marker}'", ".git/config"),
    "git-config-hooks-path": ("git config core.hooksPath {evil}", ".git/config"),
    "append-to-config": ("printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> .git/config", ".git/config"),
    "hook": ("printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-checkout", ".git/hooks/post-checkout"),
    "commondir": ("printf '{evil}' > .git/commondir", ".git/commondir"),
    "config-worktree": ("printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > .git/config.worktree",
                        ".git/config.worktree"),
}


@MODE
@pytest.mark.parametrize("way", sorted(GIT_MACHINERY))
def test_what_git_runs_cannot_be_written(mode, way, tmp_path):
    marker, evil = tmp_path / "pwned", tmp_path / "evil"
    evil.mkdir()
    command, named = GIT_MACHINERY[way]
    ws = git_workspace(tmp_path, f"mkdir -p dist; {command.format(marker=marker, evil=evil)}; true", cache=True)
    before = git_machinery(ws)
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    task = doc["tasks"]["app:t"]
    assert git_machinery(ws) == before, r.stdout
    refused = task["findings"].get("refusedWrites", [])
    # git writes its configuration through config.lock, which Landlock alone refuses first.
    assert any(p == named or p == named + ".lock" for p in refused), task
    assert "kept to what it declares" not in r.stdout[r.stdout.find("Sandbox enforce:"):], r.stdout
    # Refused, so not cached: a second run runs it again rather than restoring.
    (ws / "dist" / "keep.txt").unlink()
    _, again = enforce(ws, "t", tmp_path / "r2.json", mode=mode)
    assert again["tasks"]["app:t"]["status"] == "enforced", again["tasks"]["app:t"]
    subprocess.run(["git", "status"], cwd=ws, check=True, capture_output=True)
    assert not marker.exists()


@MODE
def test_the_rest_of_git_stays_open(mode, tmp_path):
    # Objects land in the workspace as the task writes them; git status refreshing the index as it reads
    # is no refusal, so the task is cached and restored.
    ws = git_workspace(tmp_path, "git status --porcelain -- src > dist/status.txt; "
                                 "echo data | git hash-object -w --stdin > dist/object.txt", cache=True)
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["tasks"]["app:t"]["findings"].get("refusedWrites") is None, doc["tasks"]["app:t"]
    sha = (ws / "dist" / "object.txt").read_text().strip()
    assert (ws / ".git" / "objects" / sha[:2] / sha[2:]).exists()
    (ws / "dist" / "object.txt").unlink()
    _, again = enforce(ws, "t", tmp_path / "r2.json", mode=mode)
    assert again["tasks"]["app:t"]["status"] == "restored", again["tasks"]["app:t"]


INSTALLED = {
    "node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/index.js": "module.exports = 'pad';\n",
    "node_modules/.bin/left-pad": "#!/bin/sh\necho pad\n",
    "node_modules/.modules.yaml": "layoutVersion: 5\n",
    "node_modules/.cache/tool/state.json": "{}\n",
}

INSTALLED_WRITES = {
    "package-file": "echo evil > node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/index.js",
    "package-file-replaced": "echo evil > dist/x.js && mv dist/x.js node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/index.js",
    "new-package-file": "echo evil > node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/extra.js",
    "bin": "echo 'echo evil' > node_modules/.bin/left-pad",
    "new-package": "mkdir -p node_modules/evil && echo evil > node_modules/evil/index.js",
    "package-manager-state": "echo evil > node_modules/.modules.yaml",
}


@MODE
@pytest.mark.parametrize("way", sorted(INSTALLED_WRITES))
def test_installed_packages_cannot_be_written(mode, way, tmp_path):
    ws = escape_workspace(tmp_path / "ws", {"t": target(f"mkdir -p dist; {INSTALLED_WRITES[way]}; true", cache=True)},
                          INSTALLED)
    before = snapshot(ws, leave_out=(".qk", "dist", "x.js"))
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    task = doc["tasks"]["app:t"]
    after = snapshot(ws, leave_out=(".qk", "dist", "x.js"))
    assert after == before, r.stdout
    refused = task["findings"].get("refusedWrites", [])
    assert any(p.startswith("node_modules/") for p in refused), task
    assert "kept to what it declares" not in r.stdout[r.stdout.find("Sandbox enforce:"):], r.stdout


@MODE
def test_what_tools_keep_in_node_modules_stays_writable(mode, tmp_path):
    ws = escape_workspace(tmp_path / "ws", {"t": target(
        "mkdir -p dist; echo 1 > node_modules/.cache/tool/state.json; echo ok > dist/out.txt", cache=True)}, INSTALLED)
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "node_modules/.cache/tool/state.json").read_text() == "1\n"
    assert doc["tasks"]["app:t"]["findings"].get("refusedWrites") is None, doc["tasks"]["app:t"]


def test_a_tool_cache_made_in_node_modules_is_kept_over_the_overlay(tmp_path):
    # Over the overlay a directory a tool makes in node_modules is applied as the task ends. (Landlock
    # alone cannot let a task make one without letting it make packages: refused and named there.)
    ws = escape_workspace(tmp_path / "ws", {"t": target(
        "mkdir -p dist node_modules/.vite/deps; echo 1 > node_modules/.vite/deps/_metadata.json", cache=True)},
        INSTALLED)
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "node_modules/.vite/deps/_metadata.json").read_text() == "1\n"
    assert doc["tasks"]["app:t"]["findings"].get("refusedWrites") is None, doc["tasks"]["app:t"]


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_the_audit_counts_writes_to_what_git_runs_and_what_was_installed(recorder, tmp_path):
    # What enforce refuses the audit counts as going beyond; the rest of .git stays apart, allowed.
    ws = escape_workspace(tmp_path / "ws", {"t": target(
        "mkdir -p dist; echo x > node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/index.js; "
        "echo 1 > node_modules/.cache/tool/state.json; mkdir -p .git/hooks .git/refs; "
        "echo x > .git/hooks/pre-commit; echo y > .git/refs/note")}, INSTALLED)
    r, doc = sandbox(ws, "t", recorder, tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    findings = doc["tasks"]["app:t"]["findings"]
    stray = findings.get("strayWrites", [])
    assert "node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/index.js" in stray, findings
    assert ".git/hooks/pre-commit" in stray, findings
    assert not any(p.startswith("node_modules/.cache") for p in stray), findings
    assert "1 of 1 task went beyond" in audit_text(r.stdout), r.stdout
    # .git/refs/note is .git's own, allowed: among strayWrites in the report, not counted.
    assert ".git/refs/note" in stray, findings


@MODE
def test_a_sysctl_cannot_be_written(mode, tmp_path):
    # Root writing kernel.core_pattern would make the kernel run its program outside every sandbox.
    path = "/proc/sys/kernel/core_pattern"
    before = Path(path).read_text()
    ws = escape_workspace(tmp_path / "ws", {"t": target(f"mkdir -p dist; echo '|/bin/false qk-pwned' > {path}")})
    try:
        r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
        after = Path(path).read_text()
    finally:
        if Path(path).read_text() != before:  # the hole is back: leave the machine as it was
            Path(path).write_text(before)
    assert after == before
    assert r.returncode != 0, r.stdout + r.stderr
    # The task failed on it: the refusal is named, with nothing to declare, never "no refusal listed".
    assert doc["tasks"]["app:t"]["findings"].get("refusedOutside") == [path], doc["tasks"]["app:t"]
    summary = r.stdout[r.stdout.find("Sandbox enforce:"):]
    assert "1 path refused outside the workspace" in summary and path in summary, summary
    assert "no refusal listed" not in summary, summary


@MODE
def test_the_task_keeps_no_capability_over_the_host(mode, tmp_path):
    # The bounding set lost everything but file work; over an overlay, root's user namespace is its own.
    command = "mkdir -p dist; grep -E '^CapBnd' /proc/self/status > dist/caps; readlink /proc/self/ns/user >> dist/caps"
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (ws / "dist" / "caps").read_text().split("\n")
    bounding = int(lines[0].split()[1], 16)
    assert bounding & ~0b11011111 == 0, lines  # CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID SETGID SETUID
    assert bounding & (1 << 21) == 0  # CAP_SYS_ADMIN
    if mode == "overlay":
        assert lines[1] != os.readlink("/proc/self/ns/user"), lines  # a user namespace of its own, root or not


TIOCSTI = "import fcntl, os, termios; fd = os.open('/dev/tty', os.O_RDWR); fcntl.ioctl(fd, termios.TIOCSTI, b'Q')"


def run_on_a_terminal(argv: list[str], cwd: Path, env: dict) -> tuple[int, bytes]:
    """Runs argv as the leader of a session whose controlling terminal is a new pty; returns its exit code
    and what input the terminal holds afterwards (what a TIOCSTI pushed)."""
    import fcntl
    import select
    import termios
    master, slave = os.openpty()

    def controlling():
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    proc = subprocess.run(argv, cwd=cwd, env=env, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          preexec_fn=controlling, timeout=300)
    # What was pushed sits in the slave's input queue: read it from the slave without blocking.
    os.set_blocking(slave, False)
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ICANON
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    pushed = b""
    while select.select([slave], [], [], 0)[0]:
        chunk = os.read(slave, 64)
        if not chunk:
            break
        pushed += chunk
    os.close(master)
    os.close(slave)
    return proc.returncode, pushed


@MODE
def test_the_task_cannot_type_into_qks_terminal(mode, tmp_path):
    python = "/usr/bin/python3"
    # The same push, outside qk, reaches the terminal: the test can tell.
    code, pushed = run_on_a_terminal([python, "-c", TIOCSTI], tmp_path, dict(os.environ))
    assert code == 0 and pushed == b"Q", (code, pushed)
    ws = escape_workspace(tmp_path / "ws", {"t": target(f'mkdir -p dist; {python} -c "{TIOCSTI}"')})
    env = dict(os.environ)
    argv = [str(h.BUILD_DIR / "qk"), "run-many", "-t", "t", "--sandbox=enforce", "--skip-cache"]
    env.update({"QK_SANDBOX_OVERLAY": "0"} if mode == "landlock" else {})
    code, pushed = run_on_a_terminal(argv, ws, env)
    assert pushed == b"", pushed
    assert code != 0
