"""A result is stored under the key it was made from: a file the key holds, edited while the task runs
(an editor saving, a second terminal, the task itself), is read at its new content, which the key computed
before the task does not say. qk checks what the key was computed from before it stores, and stores
nothing then: even when the edit was put back, content and mtime, before the task ended (issue 38, item 2),
in every mode."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from audit_workspace import make_workspace
from enforce_workspace import MODES, escape_workspace, mode_env, target
import qk_harness as h

ALL_MODES = ("plain", "audit") + MODES  # plain: no sandbox; audit: --sandbox; enforce over an overlay, Landlock alone
EVERY = pytest.mark.parametrize("mode", [m if m == "plain" else pytest.param(m, marks=pytest.mark.privileged)
                                         for m in ALL_MODES])
RESTORED = "restored from the cache"


def run(ws: Path, go: Path | None = None, edit=None, *more: str) -> subprocess.CompletedProcess:
    """qk run-many -t build; with `go`, `edit` runs once the task waits on the fifo, then the task goes on."""
    proc = subprocess.Popen([str(h.BUILD_DIR / "qk"), "run-many", "-t", "build", *more], cwd=ws, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if go:
        fd = h.open_when_read(go, proc)  # the task waits on it: its key was computed, it is running
        edit()
        os.write(fd, b"go\n")
        os.close(fd)
    out = proc.communicate(timeout=120)[0]
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "")


def test_an_input_edited_while_the_task_runs_leaves_no_result_under_the_old_key(tmp_path):
    go = tmp_path / "go"
    os.mkfifo(go)
    command = f"test -p {go} && read line < {go}; mkdir -p dist && cp src/main.txt dist/out.txt"
    ws = escape_workspace(tmp_path / "ws", {"build": target(command, cache=True)})
    # Later runs do not wait: the fifo is gone.
    r = run(ws, go, lambda: (ws / "src/main.txt").write_text("edited\n"))
    assert r.returncode == 0, r.stdout
    assert (ws / "dist/out.txt").read_text() == "edited\n"
    assert "the result was not cached: src/main.txt changed while it ran" in r.stdout, r.stdout
    go.unlink()
    # Reverted: the key is the first run's, and nothing was stored under it, so the task runs again and
    # its output is what the reverted input gives (a stored result would replay "edited").
    (ws / "src/main.txt").write_text("main\n")
    r = run(ws)
    assert r.returncode == 0 and "restored from the cache" not in r.stdout, r.stdout
    assert (ws / "dist/out.txt").read_text() == "main\n"
    # With nothing edited meanwhile the result is stored, and the next run restores it.
    assert "not cached" not in r.stdout, r.stdout
    r = run(ws)
    assert "restored from the cache" in r.stdout, r.stdout
    assert (ws / "dist/out.txt").read_text() == "main\n"


def test_an_output_rewritten_with_the_same_bytes_is_no_change(tmp_path):
    # dist is not git-ignored here, so its files are inputs too; a rebuild rewrites them unchanged.
    command = "mkdir -p dist && cp src/main.txt dist/out.txt"
    ws = escape_workspace(tmp_path / "ws", {"build": target(command, cache=True, inputs=["{projectRoot}/**/*"])},
                          {".gitignore": "", "dist/out.txt": "main\n"})
    r = run(ws)
    assert r.returncode == 0, r.stdout
    assert "not cached" not in r.stdout, r.stdout
    assert "restored from the cache" in run(ws).stdout


def test_a_dependency_file_edited_while_the_task_runs_leaves_no_result(tmp_path):
    # app's key holds lib's files through "^default" as one digest; the guard looks at the files behind it.
    go = tmp_path / "go"
    os.mkfifo(go)
    app = {"command": f"test -p {go} && read line < {go}; mkdir -p dist && cat ../lib/src/lib.txt > dist/out.txt",
           "options": {"cwd": "packages/app"}, "inputs": ["{projectRoot}/src/**/*", "^default"],
           "outputs": ["{projectRoot}/dist"], "cache": True}
    ws = make_workspace(tmp_path / "ws", {
        "lib": {"root": "packages/lib", "targets": {}},
        "app": {"root": "packages/app", "targets": {"build": app}, "depends": ["lib"]},
    }, {"packages/lib/src/lib.txt": "lib\n", "packages/app/src/app.txt": "app\n", ".gitignore": "dist\n"})
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    r = run(ws, go, lambda: (ws / "packages/lib/src/lib.txt").write_text("edited\n"), "-p", "app")
    assert r.returncode == 0, r.stdout
    assert "the result was not cached: packages/lib/src/lib.txt changed while it ran" in r.stdout, r.stdout
    go.unlink()
    (ws / "packages/lib/src/lib.txt").write_text("lib\n")
    r = run(ws, None, None, "-p", "app")
    assert r.returncode == 0 and "restored from the cache" not in r.stdout, r.stdout
    assert (ws / "packages/app/dist/out.txt").read_text() == "lib\n"


def run_in(mode: str, ws: Path, report: Path, during=None) -> tuple[subprocess.CompletedProcess, dict | None]:
    """qk run-many -t build in `mode`; `during(proc)` runs while the task does. The run, and under a sandbox
    the task's record in its report."""
    sandbox = {"plain": [], "audit": ["--sandbox"]}.get(mode, ["--sandbox=enforce"])
    if sandbox:
        sandbox += ["--sandbox-report", str(report)]
    env = {**os.environ, **mode_env(mode)}
    proc = subprocess.Popen([str(h.BUILD_DIR / "qk"), "run-many", "-t", "build", *sandbox], cwd=ws, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if during:
        during(proc)
    out = proc.communicate(timeout=120)[0]
    r = subprocess.CompletedProcess(proc.args, proc.returncode, out, "")
    assert not sandbox or report.exists(), out
    return r, (json.loads(report.read_text())["tasks"]["app:build"] if sandbox else None)


def put_back(path: Path, text: str, was: os.stat_result) -> None:
    """`path` holds `text` again with the mtime it had (`touch -r`): only its ctime, which no call sets
    back, says it was written."""
    path.write_text(text)
    os.utime(path, ns=(was.st_atime_ns, was.st_mtime_ns))
    now = path.stat()
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (was.st_size, was.st_mtime_ns, was.st_ino)


def guarded_workspace(tmp_path: Path, command: str) -> Path:
    # dist is there before the task: held by Landlock alone qk would make it, and not cache the task for that.
    return escape_workspace(tmp_path / "ws", {"build": target(command, cache=True)}, {"dist/old.txt": "old\n"})


def assert_runs_again_then_restores(ws: Path, mode: str, tmp_path: Path) -> None:
    """Nothing was stored under the key: with the output gone the task runs again, from the file as it is,
    and only that result is stored and restored."""
    (ws / "dist/out.txt").unlink(missing_ok=True)
    r, _ = run_in(mode, ws, tmp_path / "again.json")
    assert r.returncode == 0 and RESTORED not in r.stdout, r.stdout
    assert "not cached" not in r.stdout, r.stdout
    assert (ws / "dist/out.txt").read_text() == "main\n"
    (ws / "dist/out.txt").unlink()
    r, _ = run_in(mode, ws, tmp_path / "restored.json")
    assert RESTORED in r.stdout, r.stdout
    assert (ws / "dist/out.txt").read_text() == "main\n"


@EVERY
def test_an_input_edited_and_put_back_while_the_task_runs_leaves_no_result(mode, tmp_path):
    # Another process edits src/main.txt once the task runs, and puts it back, mtime too, once the task has
    # copied it: content and mtime are the key's again when the task ends.
    go, back = tmp_path / "go", tmp_path / "back"
    os.mkfifo(go)
    os.mkfifo(back)
    command = (f"if test -p {go}; then read line < {go}; fi; mkdir -p dist && cp src/main.txt dist/out.txt"
               f" && if test -p {back}; then read line < {back}; fi")
    ws = guarded_workspace(tmp_path, command)
    main = ws / "src/main.txt"
    was = main.stat()

    def edit_and_put_back(proc):
        fd = h.open_when_read(go, proc)
        main.write_text("edited\n")
        os.write(fd, b"go\n")
        os.close(fd)
        fd = h.open_when_read(back, proc)  # it has copied what it read
        put_back(main, "main\n", was)
        os.write(fd, b"go\n")
        os.close(fd)

    r, task = run_in(mode, ws, tmp_path / "r.json", edit_and_put_back)
    assert r.returncode == 0, r.stdout
    assert (ws / "dist/out.txt").read_text() == "edited\n"  # computed from the edit, whatever the mode
    assert "the result was not cached: src/main.txt changed while it ran" in r.stdout, r.stdout
    assert "its content is the same at the end" in r.stdout, r.stdout
    if task:
        assert not task["findings"].get("strayWrites") and not task["findings"].get("discardedWrites"), task
    go.unlink()
    back.unlink()
    assert_runs_again_then_restores(ws, mode, tmp_path)


@EVERY
def test_a_task_editing_its_input_and_putting_it_back_leaves_no_result(mode, tmp_path):
    # The task itself edits src/main.txt, computes from it and puts it back with its mtime (touch -r), while
    # the marker outside the workspace is there (the first run only).
    marker = tmp_path / "edit"
    marker.write_text("")
    command = (f"if [ -e {marker} ]; then o=$(mktemp) && cp -p src/main.txt $o && echo edited > src/main.txt"
               " && mkdir -p dist && cp src/main.txt dist/out.txt && cat $o > src/main.txt && touch -r $o src/main.txt;"
               " else mkdir -p dist && cp src/main.txt dist/out.txt; fi")
    ws = guarded_workspace(tmp_path, command)
    main = ws / "src/main.txt"
    was = main.stat()
    r, task = run_in(mode, ws, tmp_path / "r.json")
    assert main.read_text() == "main\n" and main.stat().st_mtime_ns == was.st_mtime_ns
    if mode == "landlock":
        # Refused as it writes: the task fails, and the refusal is listed.
        assert r.returncode != 0, r.stdout
        assert task["findings"].get("refusedWrites") == ["src/main.txt"], task
    else:
        assert r.returncode == 0, r.stdout
        assert (ws / "dist/out.txt").read_text() == "edited\n"
        assert "the result was not cached: src/main.txt changed while it ran" in r.stdout, r.stdout
    if mode == "overlay":
        # The edit was the task's own view's, discarded as it ended: the workspace never held it, but the
        # task computed from it all the same.
        assert task["findings"].get("discardedWrites") == ["src/main.txt"], task
        assert "in the task's own view over the overlay" in r.stdout, r.stdout
    elif mode != "landlock":
        # In the workspace itself the edit shows in the file's ctime, though content and mtime are back.
        assert "its content is the same at the end" in r.stdout, r.stdout
        if mode == "audit":
            assert task["findings"].get("strayWrites") == ["src/main.txt"], task
    marker.unlink()
    assert_runs_again_then_restores(ws, mode, tmp_path)
