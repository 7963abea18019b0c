"""Enforce's apply step over REAL overlay upper layers: each task's commands run in
`unshare -Urm` over an overlay of a temporary workspace (userxattr, upper and work made by a
SandboxDir), then qk-apply-upper reads the upper layer and applies what the outputs cover. The
workspace is compared exactly with what it should hold.

These need unprivileged user namespaces and overlayfs in them, not root: where that is missing
they skip, and under QK_REQUIRE_PRIVILEGED=1 (CI) they fail."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import qk_harness as h

TOOL = h.BUILD_DIR / "tests" / "tools" / "qk-apply-upper"

# Runs inside the new user and mount namespace: the overlay goes on the workspace's own path.
INNER = (
    'mount -t overlay overlay -o "lowerdir=$WS,upperdir=$UPPER,workdir=$WORK,userxattr" "$WS" '
    '&& cd "$WS" && eval "$SCRIPT"'
)

# Run by `qk-apply-upper sandbox` with QK_UPPER/QK_WORK set: the commands one after another over one
# upper layer (as a task's sequential commands share one), then the apply.
RUNNER = r"""
import json, os, subprocess, sys
spec = json.loads(os.environ["QK_TEST_SPEC"])
for script in spec["scripts"]:
    env = dict(os.environ, WS=spec["ws"], UPPER=os.environ["QK_UPPER"], WORK=os.environ["QK_WORK"], SCRIPT=script)
    r = subprocess.run(["unshare", "-Urm", "sh", "-c", spec["inner"]], env=env)
    if r.returncode:
        sys.exit(10)
sys.stdout.flush()
os.execv(spec["tool"], [spec["tool"], "apply", "--trash", os.environ["QK_TRASH"], os.environ["QK_UPPER"], spec["ws"],
                       *spec["outputs"]])
"""


def overlay_problem() -> str | None:
    if not os.access(TOOL, os.X_OK):
        pytest.fail(f"{TOOL} is not built: run `cmake --build build/default`", pytrace=False)
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    with tempfile.TemporaryDirectory(prefix="qk-ovl-probe-") as t:
        for d in ("ws", "upper", "work"):
            os.mkdir(os.path.join(t, d))
        env = dict(os.environ, WS=f"{t}/ws", UPPER=f"{t}/upper", WORK=f"{t}/work", SCRIPT="touch probe")
        r = subprocess.run(["unshare", "-Urm", "sh", "-c", INNER], env=env, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(f"{t}/upper/probe"):
            return f"no overlay in an unprivileged user namespace here: {r.stderr.strip()}"
    return None


@pytest.fixture(scope="module")
def overlay():
    problem = overlay_problem()
    if problem:
        h.skip_or_fail(problem)


def lay_out(root: Path, layout: dict):
    """layout: rel -> text (a file), None (a directory), ("link", target)."""
    for rel, what in layout.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if what is None:
            p.mkdir(parents=True, exist_ok=True)
        elif isinstance(what, tuple):
            os.symlink(what[1], p)
        else:
            p.write_text(what)


def tree(root: Path) -> dict:
    """rel -> "d" | "f:<text>" | "l:<target>" | "p", links never followed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "l:" + os.readlink(p)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = "d"
            elif stat.S_ISREG(st.st_mode):
                out[rel] = "f:" + Path(p).read_text()
            else:
                out[rel] = "p" if stat.S_ISFIFO(st.st_mode) else "c"
    return out


def overlay_xattrs(root: Path) -> list:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [""] + dirnames + filenames:
            p = os.path.join(dirpath, name) if name else dirpath
            for x in os.listxattr(p, follow_symlinks=False):
                if x.startswith(("user.overlay.", "trusted.overlay.")):
                    found.append((os.path.relpath(p, root), x))
    return found


class Task:
    def __init__(self, base: Path):
        self.base = base
        self.ws = base / "ws"
        self.sandbox = base / "sb"
        self.ws.mkdir()

    def run(self, scripts: list[str], outputs: list[str], prefix: list[str] | None = None) -> dict:
        spec = {"ws": str(self.ws), "scripts": scripts, "outputs": outputs, "inner": INNER, "tool": str(TOOL)}
        env = dict(os.environ, QK_SANDBOX_DIR=str(self.sandbox), QK_TEST_SPEC=json.dumps(spec))
        cmd = (prefix or []) + [str(TOOL), "sandbox", str(self.ws), "--", sys.executable, "-c", RUNNER]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert r.returncode == 0, f"exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
        lines = r.stdout.splitlines()
        assert len(lines) == 2, r.stdout
        self.sandbox_info = json.loads(lines[0])
        result = json.loads(lines[1])
        # The run directory went with the SandboxDir, mode-000 work/work made by the kernel included.
        assert not os.path.exists(self.sandbox_info["run_dir"])
        assert [e for e in os.listdir(self.sandbox) if e.startswith("run-")] == []
        assert overlay_xattrs(self.ws) == []
        return result


@pytest.fixture
def task(tmp_path, overlay) -> Task:
    return Task(Path(os.path.realpath(tmp_path)))


def discarded(result: dict) -> list:
    return [(d["path"], d["kind"]) for d in result["discarded"]]


def test_files_created_modified_removed_renamed_inside_outputs_land_and_nothing_else(task):
    lay_out(task.ws, {"dist/keep.js": "keep", "dist/mod.js": "old", "dist/del.js": "del", "dist/ren.js": "ren",
                      "dist/olddir/x": "x", "src/main.c": "main"})
    result = task.run(
        ["echo -n new > dist/mod.js; echo -n add > dist/add.js; rm dist/del.js; mv dist/ren.js dist/renamed.js; "
         "mv dist/olddir dist/newdir; "  # a lower directory: rename(2) gives EXDEV, mv copies
         "echo -n changed > src/main.c; echo -n stray > stray.txt; mkdir tmpdir; echo t > tmpdir/t"],
        ["dist"])
    assert tree(task.ws) == {
        "dist": "d", "dist/keep.js": "f:keep", "dist/mod.js": "f:new", "dist/add.js": "f:add",
        "dist/renamed.js": "f:ren", "dist/newdir": "d", "dist/newdir/x": "f:x",
        "src": "d", "src/main.c": "f:main",
    }
    assert discarded(result) == [("src/main.c", "file"), ("stray.txt", "file"), ("tmpdir", "created_directory")]


def test_rm_rf_and_recreate_an_output_directory(task):
    lay_out(task.ws, {"dist/old.js": "old", "dist/sub/old.js": "old"})
    result = task.run(["rm -rf dist && mkdir -p dist/sub && echo -n new > dist/sub/new.js"], ["dist"])
    assert {"path": "dist", "kind": "replaced_directory"} in result["changes"]
    assert tree(task.ws) == {"dist": "d", "dist/sub": "d", "dist/sub/new.js": "f:new"}
    assert result["discarded"] == []


@pytest.mark.parametrize("existed", [False, True])
def test_a_directory_built_beside_the_output_and_renamed_into_place(task, existed):
    if existed:
        lay_out(task.ws, {"dist/old.js": "old"})
    result = task.run(["mkdir dist.tmp && echo -n app > dist.tmp/app.js && rm -rf dist && mv dist.tmp dist"],
                      ["dist"])
    assert tree(task.ws) == {"dist": "d", "dist/app.js": "f:app"}
    assert result["discarded"] == []
    assert not any(c["path"].startswith("dist.tmp") for c in result["changes"])


def test_cargo_makes_the_directory_its_output_lies_in(task):
    lay_out(task.ws, {"Cargo.toml": "[package]"})
    result = task.run(["mkdir -p target/release/deps && echo -n bin > target/release/app && "
                       "echo -n lib > target/release/deps/x.rlib && echo -n '{}' > target/.rustc_info.json"],
                      ["target/release"])
    assert tree(task.ws) == {"Cargo.toml": "f:[package]", "target": "d", "target/release": "d",
                             "target/release/app": "f:bin", "target/release/deps": "d",
                             "target/release/deps/x.rlib": "f:lib"}
    assert discarded(result) == [("target/.rustc_info.json", "file")]


def test_a_file_replaced_by_a_directory_and_a_directory_by_a_file(task):
    lay_out(task.ws, {"out/f2d": "file", "out/d2f/inner": "inner"})
    task.run(["rm out/f2d && mkdir out/f2d && echo -n in > out/f2d/in && rm -rf out/d2f && echo -n f > out/d2f"],
             ["out"])
    assert tree(task.ws) == {"out": "d", "out/f2d": "d", "out/f2d/in": "f:in", "out/d2f": "f:f"}


def test_a_link_made_in_the_outputs_is_applied_as_a_link(task):
    task.run(["mkdir dist && ln -s /etc/passwd dist/passwd && ln -s ../src dist/rel"], ["dist"])
    assert tree(task.ws) == {"dist": "d", "dist/passwd": "l:/etc/passwd", "dist/rel": "l:../src"}


def test_a_workspace_link_to_outside_is_replaced_by_the_directory_made_there(task):
    outside = task.base / "outside"
    lay_out(outside, {"precious": "untouched"})
    lay_out(task.ws, {"dist": ("link", str(outside))})
    task.run(["rm dist && mkdir dist && echo -n a > dist/a"], ["dist"])
    assert tree(task.ws) == {"dist": "d", "dist/a": "f:a"}
    assert tree(outside) == {"precious": "f:untouched"}


def test_a_write_through_a_link_inside_the_workspace_is_not_an_output(task):
    lay_out(task.ws, {"real/r": "r", "lib": ("link", "real")})
    result = task.run(["echo -n x > lib/new"], ["lib"])  # lands in real/, which is no output
    assert tree(task.ws) == {"real": "d", "real/r": "f:r", "lib": "l:real"}
    assert discarded(result) == [("real/new", "file")]


def test_names_with_newlines_and_spaces(task):
    task.run(["mkdir -p 'dist/with space' && echo -n 1 > \"$(printf 'dist/with space/new\\nline')\""], ["dist"])
    assert tree(task.ws) == {"dist": "d", "dist/with space": "d", "dist/with space/new\nline": "f:1"}


def test_a_mode_change_is_a_whole_copy_up_and_lands(task):
    lay_out(task.ws, {"dist/tool": "#!/bin/sh"})
    os.chmod(task.ws / "dist/tool", 0o644)
    task.run(["chmod 755 dist/tool"], ["dist"])
    assert stat.S_IMODE(os.stat(task.ws / "dist/tool").st_mode) == 0o755
    assert tree(task.ws) == {"dist": "d", "dist/tool": "f:#!/bin/sh"}


def test_sequential_commands_share_one_upper_layer(task):
    lay_out(task.ws, {"dist/old": "old"})
    result = task.run(["echo -n 1 > dist/a && echo -n t > dist/tmp", "rm dist/tmp dist/old && echo -n 2 >> dist/a"],
                      ["dist"])
    assert tree(task.ws) == {"dist": "d", "dist/a": "f:12"}
    assert result["discarded"] == []


def test_side_by_side_commands_each_have_an_upper_applied_one_after_another(tmp_path, overlay):
    base = Path(os.path.realpath(tmp_path))
    ws = base / "ws"
    ws.mkdir()
    dirs = []
    for n, script in enumerate(["mkdir dist && echo -n a > dist/a", "mkdir dist && echo -n b > dist/b"]):
        upper, work = base / f"upper{n}", base / f"work{n}"
        upper.mkdir()
        work.mkdir()
        env = dict(os.environ, WS=str(ws), UPPER=str(upper), WORK=str(work), SCRIPT=script)
        subprocess.run(["unshare", "-Urm", "sh", "-c", INNER], env=env, check=True)
        dirs.append(upper)
    for upper in dirs:  # both made dist; the second merges into the first's rather than replacing it
        subprocess.run([str(TOOL), "apply", str(upper), str(ws), "dist"], check=True, capture_output=True)
    assert tree(ws) == {"dist": "d", "dist/a": "f:a", "dist/b": "f:b"}


def test_a_killed_run_is_cleaned_by_the_next(task):
    env = dict(os.environ, QK_SANDBOX_DIR=str(task.sandbox))
    killed = subprocess.run([str(TOOL), "sandbox", str(task.ws), "--", "sh", "-c", "kill -9 $PPID"],
                            env=env, capture_output=True, text=True)
    assert killed.returncode == -9
    left = json.loads(killed.stdout.splitlines()[0])["run_dir"]
    assert os.path.isdir(left)
    nxt = subprocess.run([str(TOOL), "sandbox", str(task.ws), "--", "true"], env=env, capture_output=True, text=True)
    assert nxt.returncode == 0, nxt.stderr
    assert json.loads(nxt.stdout.splitlines()[0])["removed"] == [left]
    assert not os.path.exists(left)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="switching to an unprivileged user needs root and setpriv")
def test_the_whole_step_as_an_unprivileged_user(overlay):
    # Without root's DAC override: the kernel's mode-000 work/work, files a user may not read.
    base = Path(tempfile.mkdtemp(prefix="qk-enforce-nobody-"))
    try:
        os.chmod(base, 0o755)
        t = Task(base)
        lay_out(t.ws, {"dist/old.js": "old", "src/a": "a"})
        os.chmod(t.ws / "src/a", 0o400)
        for dirpath, dirnames, filenames in os.walk(base):
            for name in [dirpath] + [os.path.join(dirpath, n) for n in dirnames + filenames]:
                os.lchown(name, 65534, 65534)
        result = t.run(["rm -rf dist && mkdir dist && echo -n new > dist/app.js && echo -n x >> src/a"], ["dist"],
                       prefix=["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
        assert tree(t.ws) == {"dist": "d", "dist/app.js": "f:new", "src": "d", "src/a": "f:a"}
        assert discarded(result) == [("src/a", "file")]
    finally:
        shutil.rmtree(base)
