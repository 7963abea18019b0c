"""A result is stored under the key it was made from: a file the key holds, edited while the task runs
(an editor saving, a second terminal), is read at its new content, which the key computed before the
task does not say. qk checks what the key was computed from before it stores, and stores nothing then."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from audit_workspace import make_workspace
from enforce_workspace import escape_workspace, target
import qk_harness as h


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
