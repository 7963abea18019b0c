"""qk run-many --sandbox=enforce: what a task writes in its outputs lands exactly, the rest is not kept and
listed; a dependent sees its dependency's outputs; the cache stores what was applied; refused and
unsandboxed tasks; a kill -9 in the middle leaves the workspace and the machine as they were; run as
root and as an ordinary user."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from audit_workspace import make_workspace, qk
from enforce_workspace import MODES, enforce, escape_workspace, mode_env, outside_dist, snapshot, target
import qk_harness as h

pytestmark = pytest.mark.privileged

MODE = pytest.mark.parametrize("mode", MODES)


def test_changes_inside_the_outputs_land_exactly_and_nothing_else(tmp_path):
    files = {"dist/keep.txt": "old\n", "dist/gone.txt": "gone\n", "dist/old/a.txt": "a\n", "dist/olddir/x": "x\n"}
    command = ("echo new > dist/keep.txt && rm dist/gone.txt && mkdir -p dist/sub/deep && echo d > dist/sub/deep/d.txt"
               " && mv dist/old/a.txt dist/old/b.txt && rm -rf dist/olddir && echo s > stray.txt")
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)}, files)
    before = snapshot(ws)
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    after = snapshot(ws)
    expected = dict(before)
    for gone in ("dist/gone.txt", "dist/old/a.txt", "dist/olddir", "dist/olddir/x"):
        del expected[gone]
    expected["dist/keep.txt"] = ("file", before["dist/keep.txt"][1], b"new\n")
    expected["dist/old/b.txt"] = ("file", before["dist/old/a.txt"][1], b"a\n")
    for d in ("dist/sub", "dist/sub/deep"):
        expected[d] = after[d]
    expected["dist/sub/deep/d.txt"] = ("file", after["dist/sub/deep/d.txt"][1], b"d\n")
    assert after == expected
    assert doc["tasks"]["app:t"]["findings"] == {"discardedWrites": ["stray.txt"]}


def test_rm_rf_and_mkdir_of_the_output_and_a_directory_renamed_into_place(tmp_path):
    files = {"dist/stale.txt": "stale\n"}
    targets = {
        "fresh": target("rm -rf dist && mkdir dist && echo fresh > dist/f.txt"),
        "renamed": target("mkdir dist.tmp && echo built > dist.tmp/app.js && rm -rf dist && mv dist.tmp dist",
                          dependsOn=["fresh"]),
    }
    ws = escape_workspace(tmp_path / "ws", targets, files)
    r, doc = enforce(ws, "fresh", tmp_path / "r1.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(os.listdir(ws / "dist")) == ["f.txt"]
    r, doc = enforce(ws, "renamed", tmp_path / "r2.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(os.listdir(ws / "dist")) == ["app.js"] and (ws / "dist/app.js").read_text() == "built\n"
    assert not (ws / "dist.tmp").exists()
    assert doc["tasks"]["app:renamed"]["findings"] == {}, doc


def test_cargo_style_output_in_a_directory_that_does_not_exist(tmp_path):
    # target/release is the output; target does not exist: it is made as the task starts and kept.
    t = {"command": "mkdir -p target/release.part && echo bin > target/release.part/app && "
                    "mv -T target/release.part target/release",
         "inputs": ["{projectRoot}/src"], "outputs": ["{projectRoot}/target/release"], "cache": False}
    ws = escape_workspace(tmp_path / "ws", {"t": t})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "target/release/app").read_text() == "bin\n"
    assert not (ws / "target/release.part").exists()


@MODE
def test_a_dependent_sees_its_dependencys_outputs_and_the_cache_restores_them(mode, tmp_path):
    projects = {
        "lib": {"root": "packages/lib", "targets": {"build": {
            "command": "mkdir -p packages/lib/dist && cat packages/lib/src/l.txt > packages/lib/dist/l.js",
            "inputs": ["{projectRoot}/src/**/*"], "outputs": ["{projectRoot}/dist"], "cache": True}}},
        "app": {"root": "packages/app", "depends": ["lib"], "targets": {"build": {
            "command": "mkdir -p packages/app/dist && cat packages/lib/dist/l.js > packages/app/dist/a.js",
            "inputs": ["{projectRoot}/src/**/*"], "outputs": ["{projectRoot}/dist"], "dependsOn": ["^build"],
            "cache": True}}},
    }
    ws = make_workspace(tmp_path / "ws", projects, {"packages/lib/src/l.txt": "lib\n", "packages/app/src/a.txt": "a\n",
                                                      ".gitignore": "dist\n"})
    if mode == "landlock":
        # Held by Landlock alone, an output directory qk must make before the task keeps its result out of
        # the cache (test_enforce_view.py): here they are there, as after a first build.
        for p in ("lib", "app"):
            (ws / f"packages/{p}/dist").mkdir()
    r, doc = enforce(ws, "build", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "packages/app/dist/a.js").read_text() == "lib\n"
    assert doc["summary"]["enforced"] == 2 and doc["summary"]["wentBeyond"] == 0, doc
    # What enforce applied is what the cache stored: a run without the sandbox restores it.
    shutil.rmtree(ws / "packages/app/dist")
    shutil.rmtree(ws / "packages/lib/dist")
    again = qk(ws, "run-many", "-t", "build")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("| ✔ restored from the cache") == 2, again.stdout
    assert (ws / "packages/app/dist/a.js").read_text() == "lib\n"


def test_sequential_commands_share_a_layer_and_parallel_ones_do_not_collide(tmp_path):
    t = {"executor": "nx:run-commands", "options": {"commands": ["mkdir -p dist && echo one > dist/one.txt",
                                                                 "cat dist/one.txt > dist/two.txt"],
                                                    "parallel": False},
         "inputs": ["{projectRoot}/src"], "outputs": ["{projectRoot}/dist"], "cache": False}
    p = {"executor": "nx:run-commands", "options": {"commands": ["mkdir -p dist/a && echo a > dist/a/a.txt",
                                                                 "mkdir -p dist/b && echo b > dist/b/b.txt"],
                                                    "parallel": True},
         "inputs": ["{projectRoot}/src"], "outputs": ["{projectRoot}/dist"], "cache": False}
    ws = escape_workspace(tmp_path / "ws", {"seq": t, "par": p})
    r, doc = enforce(ws, "seq", tmp_path / "r1.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/two.txt").read_text() == "one\n"
    r, doc = enforce(ws, "par", tmp_path / "r2.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/a/a.txt").read_text() == "a\n" and (ws / "dist/b/b.txt").read_text() == "b\n"


def test_writes_to_git_node_modules_and_scratch_land_at_once(tmp_path):
    t = target("echo h > .git/hook-ran && echo m > node_modules/.cache-m && echo s > .cache/s.txt "
               "&& test -f .git/hook-ran",
               **{"qk:sandbox": {"scratch": ["{projectRoot}/.cache"]}})
    ws = escape_workspace(tmp_path / "ws", {"t": t}, {".git/HEAD": "ref: refs/heads/main\n",
                                                      "node_modules/.keep": "", ".cache/old": "o\n"})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / ".git/hook-ran").read_text() == "h\n"
    assert (ws / "node_modules/.cache-m").read_text() == "m\n"
    assert (ws / ".cache/s.txt").read_text() == "s\n"
    assert doc["tasks"]["app:t"]["findings"] == {}, doc


def test_unsandboxed_and_restored_tasks(tmp_path):
    targets = {"free": target("cat other/secret.txt > /dev/null", **{"qk:sandbox": False}),
               "cached": {"command": "mkdir -p dist && cp src/main.txt dist/", "inputs": ["{projectRoot}/src"],
                          "outputs": ["{projectRoot}/dist"], "cache": True}}
    ws = escape_workspace(tmp_path / "ws", targets)
    r, doc = enforce(ws, "free,cached", tmp_path / "r1.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["tasks"]["app:free"]["status"] == "unsandboxed", doc
    assert doc["tasks"]["app:cached"]["status"] == "enforced", doc
    r, doc = enforce(ws, "cached", tmp_path / "r2.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["tasks"]["app:cached"] == {"project": "app", "status": "restored"}, doc


def test_a_task_whose_rules_cannot_be_built_is_refused_with_the_hint(tmp_path):
    t = target("true", **{"qk:sandbox": {"scratch": ["{projectRoot}/src"]}})
    t["qk:ultracache"] = {"ignoreReads": ["../outside/**"]}
    ws = escape_workspace(tmp_path / "ws", {"t": t})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode != 0, r.stdout + r.stderr
    task = doc["tasks"]["app:t"]
    assert task["status"] == "refused", task
    assert '"qk:sandbox": false' in task["reason"], task
    assert '"qk:sandbox": false' in r.stdout, r.stdout


def test_a_sandbox_that_cannot_be_built_refuses_the_task(tmp_path):
    # A helper that always fails to set up (as a kernel refusing the rules would) stands in here.
    fake = tmp_path / "qk-sandbox-exec"
    real = h.BUILD_DIR / "qk-sandbox-exec"
    fake.write_text(f"""#!/bin/sh
if [ "$1" = --probe ]; then exec "{real}" "$@"; fi
plan="$1"
result=$(sed -n 's/^result\\t//p' "$plan")
printf 'qk-sandbox-result 1\\nsetup\\tlandlock-rule\\t22\\tLandlock refused a rule: Invalid argument\\n' > "$result"
exit 125
""")
    fake.chmod(0o755)
    ws = escape_workspace(tmp_path / "ws", {"t": target("true")})
    r, doc = enforce(ws, "t", tmp_path / "r.json", env={"QK_SANDBOX_EXEC": str(fake)})
    assert r.returncode != 0
    task = doc["tasks"]["app:t"]
    assert task["status"] == "refused" and "Landlock refused a rule" in task["reason"], task
    assert '"qk:sandbox": false' in task["reason"]


def test_the_probe_runs_once_a_boot_and_again_after_a_sandbox_fails_to_build(tmp_path):
    # The probe's verdict is kept for the boot (src/enforce/probe_cache.cpp): a helper that logs its probes,
    # and fails every command's setup while a marker file exists, stands in for the real one.
    log, broken = tmp_path / "probes.log", tmp_path / "broken"
    fake = tmp_path / "qk-sandbox-exec"
    real = h.BUILD_DIR / "qk-sandbox-exec"
    fake.write_text(f"""#!/bin/sh
if [ "$1" = --probe ]; then echo probe >> "{log}"; exec "{real}" "$@"; fi
if [ -e "{broken}" ]; then
  result=$(sed -n 's/^result\\t//p' "$1")
  printf 'qk-sandbox-result 1\\nsetup\\tmount\\t1\\tthe overlay cannot be mounted: Operation not permitted\\n' > "$result"
  exit 125
fi
exec "{real}" "$@"
""")
    fake.chmod(0o755)
    ws = escape_workspace(tmp_path / "ws", {"t": target("mkdir -p dist && cp src/main.txt dist/main.txt")})
    env = {"QK_SANDBOX_EXEC": str(fake)}

    def run(name: str) -> dict:
        r, doc = enforce(ws, "t", tmp_path / f"{name}.json", env=env)
        return {"rc": r.returncode, "status": doc["tasks"]["app:t"]["status"], "overlay": "landlockOnly" not in doc,
                "probes": len(log.read_text().splitlines())}

    assert run("first") == {"rc": 0, "status": "enforced", "overlay": True, "probes": 1}
    assert run("kept") == {"rc": 0, "status": "enforced", "overlay": True, "probes": 1}
    assert (ws / "dist/main.txt").read_text() == "main\n"
    # Something the key does not see changed: the task is refused with the cause, and the verdict dropped.
    broken.touch()
    assert run("broken") == {"rc": 1, "status": "refused", "overlay": True, "probes": 1}
    broken.unlink()
    assert run("probed-again") == {"rc": 0, "status": "enforced", "overlay": True, "probes": 2}
    # Another helper (rebuilt, or another build's) is another key: probed on its first run.
    fake.write_text(fake.read_text() + "\n")
    assert run("rebuilt") == {"rc": 0, "status": "enforced", "overlay": True, "probes": 3}


def test_landlock_alone_says_so_and_refuses_a_write_outside_the_outputs(tmp_path):
    ws = escape_workspace(tmp_path / "ws", {"t": target("echo x > dist/a.txt && echo y > stray.txt")})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode="landlock")
    assert r.returncode != 0
    assert doc["landlockOnly"] == "QK_SANDBOX_OVERLAY=0", doc
    assert "Landlock alone" in r.stdout, r.stdout
    # dist had no extension and did not exist: made as a directory so the task could write in it.
    assert (ws / "dist/a.txt").read_text() == "x\n"
    assert not (ws / "stray.txt").exists()


def test_landlock_alone_removes_an_output_directory_it_made_and_the_task_left_empty(tmp_path):
    ws = escape_workspace(tmp_path / "ws", {"t": target("true")})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode="landlock")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (ws / "dist").exists()


@pytest.mark.parametrize("mode", ["overlay", "landlock"])
def test_a_task_clearing_its_output_directory_passes_over_the_overlay_and_is_told_why_not_under_landlock(
        mode, tmp_path):
    # As vitest clears coverage/ and tsc --build cleans dist/: the directory itself goes, then comes back.
    ws = escape_workspace(tmp_path / "ws", {"t": target("rm -rf dist && mkdir dist && echo x > dist/a.txt")},
                          {"dist/old.txt": "old\n"})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    task = doc["tasks"]["app:t"]
    if mode == "overlay":
        assert r.returncode == 0, r.stdout + r.stderr
        assert (ws / "dist/a.txt").read_text() == "x\n" and not (ws / "dist/old.txt").exists()
        return
    assert r.returncode != 0
    assert task["findings"].get("refusedWrites") == ["dist"], task
    assert "needs the overlay" in r.stdout and "dist" in r.stdout, r.stdout
    # Declaring dist again would change nothing: no suggestion names it.
    assert not any("{projectRoot}/dist" in v for s in task.get("suggestions", []) for v in s["values"]), task
    assert "what to declare" not in r.stdout, r.stdout


def test_landlock_alone_names_a_declared_file_another_process_made_again_while_the_task_ran(tmp_path):
    # Landlock alone holds the files there as the task starts, a file input by its inode: a
    # file rebuilt meanwhile (as another task rebuilding what this one reads) is refused though declared.
    # The summary says so; it is neither a write nor an input to declare.
    go = tmp_path / "go"
    os.mkfifo(go)
    t = target(f"cat {go} > /dev/null; cat src/a.txt", inputs=["{projectRoot}/src/a.txt"])
    ws = escape_workspace(tmp_path / "ws", {"t": t}, {"src/a.txt": "a\n"})
    report = tmp_path / "r.json"
    proc = subprocess.Popen([str(h.BUILD_DIR / "qk"), "run-many", "-t", "t", "--sandbox=enforce", "--sandbox-report",
                             str(report)], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **mode_env("landlock")})
    fd = h.open_when_read(go, proc)  # the task waits on it: its rules are built
    (ws / "src/a.txt.new").write_text("b\n")
    os.replace(ws / "src/a.txt.new", ws / "src/a.txt")
    os.close(fd)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode != 0, out
    doc = json.loads(report.read_text())
    findings = doc["tasks"]["app:t"]["findings"]
    assert findings == {"replacedReads": ["src/a.txt"]}, (findings, out)
    assert "made again while it ran" in out and "src/a.txt" in out, out
    assert "what to declare" not in out and "no refusal listed" not in out, out


def test_kill_9_leaves_the_workspace_untouched_and_nothing_behind(tmp_path):
    started = tmp_path / "started"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    command = f"mkdir -p dist && echo half > dist/half.txt && echo x > stray.txt && echo go > {started} && cat {fifo}"
    ws = escape_workspace(tmp_path / "ws", {"t": target(command), "ok": target("true")})
    before = snapshot(ws)
    # Sandbox directories of its own: any qk run on the machine removes one an interrupted run left (the
    # next test file's, under ctest -j), and only the run that does says so.
    own = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([str(h.BUILD_DIR / "qk"), "run-many", "-t", "t", "--sandbox=enforce"], cwd=ws,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, **own})
    deadline = time.monotonic() + 60
    while not started.exists():
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "the task never started"
        time.sleep(0.01)
    helpers = [p for p in _descendants(proc.pid) if _comm(p) == "qk-sandbox-exec"]
    assert helpers, "precondition: the command runs under qk-sandbox-exec"
    proc.kill()
    proc.wait()
    # The helper watches qk: it and everything the task started die with it, and its mounts with them.
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{p}").exists() for p in helpers):
        assert time.monotonic() < deadline, "qk-sandbox-exec outlived the qk that started it"
        time.sleep(0.01)
    assert snapshot(ws) == before
    # The next run removes the sandbox directory the killed one left, and says so.
    def runs_left():
        return [p for p in (tmp_path / "cache/qk/sandbox").iterdir() if p.name.startswith("run-")]
    assert runs_left(), "the killed run's sandbox directory is left"
    r, doc = enforce(ws, "ok", tmp_path / "r.json", env=own)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "left by an interrupted run" in r.stdout, r.stdout
    assert not runs_left()


def _descendants(pid: int) -> list[str]:
    out, todo = [], [str(pid)]
    while todo:
        p = todo.pop()
        children = subprocess.run(["pgrep", "-P", p], capture_output=True, text=True).stdout.split()
        out += children
        todo += children
    return out


def _comm(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def as_nobody(ws: Path) -> dict:
    nobody = pwd.getpwnam("nobody")
    for dirpath, dirnames, filenames in os.walk(ws):
        for name in [dirpath, *[os.path.join(dirpath, n) for n in dirnames + filenames]]:
            os.lchown(name, nobody.pw_uid, nobody.pw_gid)
    return {"HOME": str(ws.parent / "home")}


@MODE
def test_as_an_ordinary_user(mode, tmp_path):
    if shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is not installed")
    base = Path(tempfile.mkdtemp(prefix="qk-enforce-user-"))
    try:
        os.chmod(base, 0o755)
        ws = escape_workspace(base / "ws", {"t": target("cat src/main.txt && mkdir -p dist && cp src/main.txt dist/ "
                                                         "&& echo s > stray.txt && cat other/secret.txt")})
        (base / "home").mkdir()
        env = dict(os.environ, **as_nobody(ws))
        os.chown(base / "home", pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid)
        env.pop("XDG_CACHE_HOME", None)
        env.update({"QK_SANDBOX_OVERLAY": "0"} if mode == "landlock" else {})
        report = base / "home" / "r.json"
        r = subprocess.run(["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups",
                            str(h.BUILD_DIR / "qk"), "run-many", "-t", "t", "--sandbox=enforce", "--sandbox-report",
                            str(report)], cwd=ws, env=env, capture_output=True, text=True, timeout=120)
        assert report.exists(), r.stdout + r.stderr
        doc = json.loads(report.read_text())
        task = doc["tasks"]["app:t"]
        assert r.returncode != 0 and task["status"] == "enforced", r.stdout + r.stderr
        assert "Permission denied" in r.stdout
        assert (ws / "dist/main.txt").read_text() == "main\n"
        assert not (ws / "stray.txt").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


@MODE
def test_a_workspace_in_tmp_gets_a_temporary_directory_of_its_own(mode, tmp_path):
    # The workspace lies in /tmp (pytest's tmp_path): Landlock could not allow new files in /tmp without
    # allowing the workspace, so the command's TMPDIR is a directory of its own, which it may use.
    assert str(tmp_path).startswith("/tmp/")
    command = ('f=$(mktemp) && echo scratch > "$f" && cat "$f" && case "$TMPDIR" in /tmp*) exit 9;; esac '
               '&& mkdir -p dist && cp "$f" dist/tmp.txt')
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/tmp.txt").read_text() == "scratch\n"


# Not over an overlay: there each command makes its missing directories in its own upper layer, and a
# command does not see the workspace change under it (the waiting task would never see the mark).
@pytest.mark.parametrize("sandbox", ["audit", "landlock"])
@pytest.mark.parametrize("ender,waiter", [("a", "b"), ("y", "x")])
def test_a_directory_made_for_two_running_tasks_stays_until_both_end(sandbox, ender, waiter, tmp_path):
    """Two tasks declare outputs in out/, which does not exist: qk makes it for them as they start (under
    audit the directory their file outputs lie in; under enforce the directory output itself), whichever
    starts first. The ender writes nothing and ends first; the mark task, which depends on it, starts only
    once it has ended; the waiter waits for the mark, then writes in out/. When the ender ended out/ was
    empty, but the waiter still held it: it must still be there (and, under Landlock alone, be the very
    directory the waiter's rules allow). Run with the names both ways round, so that the task that made
    out/ ends first in one of the two, whichever order the tasks start in."""
    def out(name):
        return [f"{{projectRoot}}/out/{name}.txt"] if sandbox == "audit" else ["{projectRoot}/out"]
    # Bounded: should the mark never come, the waiter gives up after 30 s instead of hanging the run.
    wait = "i=0; while [ ! -e marks/m ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done"
    targets = {
        ender: {"command": "true", "outputs": out(ender), "inputs": ["{projectRoot}/src"]},
        "mark": {"command": "mkdir -p marks && echo m > marks/m", "dependsOn": [ender],
                 "outputs": ["{projectRoot}/marks"], "inputs": ["{projectRoot}/src"]},
        waiter: {"command": f"{wait}; echo w > out/{waiter}.txt", "outputs": out(waiter),
                 "inputs": ["{projectRoot}/src"]},
    }
    ws = make_workspace(tmp_path / "ws", {"app": {"root": ".", "targets": targets}}, {"src/x": "x\n"})
    mode = ["--sandbox"] if sandbox == "audit" else ["--sandbox=enforce"]
    env = {"QK_SANDBOX_OVERLAY": "0"} if sandbox == "landlock" else {}
    r = qk(ws, "run-many", "-t", f"{ender},{waiter},mark", "--parallel", "2", *mode, env=env, timeout=90)
    assert (ws / "marks/m").exists(), "the mark task never ran: the test proves nothing\n" + r.stdout + r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / f"out/{waiter}.txt").read_text() == "w\n"
