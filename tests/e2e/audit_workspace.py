"""Small workspaces for the sandbox audit's end-to-end tests, written from a description, and qk run on
them with a recorder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import qk_harness as h

QK = h.BUILD_DIR / "qk"

# Every target is a plain shell command run from the workspace root, unless it sets options.cwd.
NX_JSON = {
    "namedInputs": {"default": ["{projectRoot}/**/*"]},
    "targetDefaults": {"build": {"dependsOn": ["^build"]}},
}


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_workspace(root: Path, projects: dict[str, dict], files: dict[str, str] | None = None,
                   nx: dict | None = None) -> Path:
    """projects: name -> {"root": dir, "targets": {...}, "depends": [names]}. A project with "depends"
    gets a package.json naming them as workspace dependencies (so the project graph has the edges)."""
    root.mkdir(parents=True, exist_ok=True)
    root = Path(os.path.realpath(root))
    write(root, "nx.json", json.dumps(nx if nx is not None else NX_JSON, indent=2))
    write(root, "package.json", json.dumps({"name": "root", "private": True}))
    globs = sorted({str(Path(p["root"]).parent) + "/*" for p in projects.values() if p["root"] != "."})
    if globs:
        write(root, "pnpm-workspace.yaml", "packages:\n" + "".join(f"  - '{g}'\n" for g in globs))
    for name, p in projects.items():
        write(root, f"{p['root']}/project.json", json.dumps({"name": name, "targets": p["targets"]}, indent=2))
        manifest = {"name": name}
        if p.get("depends"):
            manifest["dependencies"] = {d: "workspace:*" for d in p["depends"]}
        if p["root"] != ".":
            write(root, f"{p['root']}/package.json", json.dumps(manifest))
    for rel, text in (files or {}).items():
        write(root, rel, text)
    return root


def qk(ws: Path, *args: str, recorder: str | None = None, env: dict | None = None,
       timeout: float = 120, prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    """qk ARGS in ws; `prefix` runs it through another program first (setpriv, to run as another user)."""
    e = dict(os.environ)
    if recorder:
        e["QK_RECORDER"] = recorder
    e.update(env or {})
    proc = subprocess.Popen([*(prefix or []), str(QK), *args], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=e)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # A run that hangs says where before it is killed: qk's threads' stacks and every process still
        # around it, for a hang that shows only under load.
        where = hang_report(proc.pid)
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"qk {' '.join(args)} did not end within {timeout} s\n{where}\n"
                             f"stdout:\n{out[-4000:]}\nstderr:\n{err[-4000:]}") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def hang_report(pid: int) -> str:
    """The stacks of a hung qk's threads (gdb) and the processes of the machine with what they wait in."""
    parts = []
    gdb = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"], capture_output=True,
                         text=True, timeout=60) if shutil.which("gdb") else None
    parts.append("gdb: " + (gdb.stdout[-12000:] if gdb else "not installed"))
    ps = subprocess.run(["ps", "-eo", "pid,ppid,stat,wchan:32,args"], capture_output=True, text=True, timeout=30)
    parts.append("ps:\n" + ps.stdout[-8000:])
    return "\n".join(parts)


def audit_text(stdout: str) -> str:
    """The sandbox audit's summary: from its first line to the end of the output."""
    start = stdout.find("Sandbox audit:")
    assert start >= 0, "no sandbox audit in the output:\n" + stdout
    return stdout[start:]


def sandbox(ws: Path, targets: str, recorder: str, report: Path, *more: str,
            env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """qk run-many -t targets --sandbox --skip-cache --sandbox-report report; the run and its report."""
    r = qk(ws, "run-many", "-t", targets, "--sandbox", "--sandbox-report", str(report), *more,
           recorder=recorder, env=env)
    assert report.exists(), r.stdout + r.stderr
    doc = json.loads(report.read_text())
    import sandbox_report
    doc = sandbox_report.checked(doc)
    return r, doc
