"""Helpers of the --sandbox=enforce end-to-end tests: a workspace with an undeclared secret beside the
declared inputs, qk run-many --sandbox=enforce on it (over an overlay, or Landlock alone), and a
snapshot of everything in it, to show that nothing outside the outputs changed."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from audit_workspace import make_workspace, qk

SECRET = "TOP-SECRET-CONTENT"
MODES = ("overlay", "landlock")  # landlock: QK_SANDBOX_OVERLAY=0


def mode_env(mode: str) -> dict:
    return {"QK_SANDBOX_OVERLAY": "0"} if mode == "landlock" else {}


def target(command: str, **more) -> dict:
    t = {"command": command, "inputs": ["{projectRoot}/src"], "outputs": ["{projectRoot}/dist"], "cache": False}
    t.update(more)
    return t


def escape_workspace(root: Path, targets: dict[str, dict], files: dict[str, str] | None = None) -> Path:
    """One project at the root: src/ declared as its input, dist/ its output, other/ undeclared."""
    base = {"src/main.txt": "main\n", "other/secret.txt": SECRET + "\n", ".gitignore": "dist\n"}
    base.update(files or {})
    return make_workspace(root, {"app": {"root": ".", "targets": targets}}, base)


def enforce(ws: Path, targets: str, report: Path, *more: str, mode: str = "overlay", env: dict | None = None,
            recorder: str | None = None, timeout: float = 120, prefix: list[str] | None = None):
    """qk run-many -t targets --sandbox=enforce --sandbox-report report; the run and its report."""
    e = mode_env(mode)
    e.update(env or {})
    r = qk(ws, "run-many", "-t", targets, "--sandbox=enforce", "--sandbox-report", str(report), *more,
           env=e, recorder=recorder, timeout=timeout, prefix=prefix)
    assert report.exists(), r.stdout + r.stderr
    doc = json.loads(report.read_text())
    import sandbox_report
    doc = sandbox_report.checked(doc)
    return r, doc


def snapshot(root: Path, leave_out: tuple[str, ...] = (".qk",)) -> dict[str, tuple]:
    """Every entry under root (but those left out, by first component): kind, mode, and content or link text."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in leave_out]
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                with open(path, "rb") as f:
                    out[rel] = ("file", stat.S_IMODE(st.st_mode), f.read())
    return out


def outside_dist(snap: dict[str, tuple]) -> dict[str, tuple]:
    return {k: v for k, v in snap.items() if k != "dist" and not k.startswith("dist/")}
