"""Real pnpm installs for the tests: pnpm itself comes from the npm registry (`npm install --prefix
<build>/tools/pnpm<major> pnpm@<major>`) and is kept there, with a package store beside it, so later runs
reuse both. Registry access is expected: a failure to reach it fails the test, saying so."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import qk_harness as h

TOOLS_DIR = h.BUILD_DIR / "tools"
STORE_DIR = TOOLS_DIR / "pnpm-store"
DUMP = h.BUILD_DIR / "tests" / "tools" / "pnpm_lock_dump"

REGISTRY_HINT = (
    "these tests install from the npm registry, which must be reachable "
    "(for a mirror set npm_config_registry)"
)


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run(cmd: list, cwd: Path, what: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("CI", None)  # pnpm in CI mode defaults to --frozen-lockfile
    env["COREPACK_ENABLE_STRICT"] = "0"
    env["npm_config_update_notifier"] = "false"
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} took over {timeout} s: `{' '.join(map(str, cmd))}`; {REGISTRY_HINT}", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(
            f"{what} failed (exit {proc.returncode}): `{' '.join(map(str, cmd))}`\n"
            f"{_tail(proc.stdout + proc.stderr)}\n{REGISTRY_HINT}",
            pytrace=False,
        )
    return proc


def pnpm(major: int) -> Path:
    """The pnpm binary of that major, installed into the build dir's tools cache if missing."""
    prefix = TOOLS_DIR / f"pnpm{major}"
    exe = prefix / "node_modules" / ".bin" / "pnpm"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs sharing a build dir install once
        if exe.exists():
            version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
            if version.startswith(f"{major}."):
                return exe
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is not installed: these tests install pnpm with it (apt-get install npm)", pytrace=False)
        # A registry that stalls mid-download is retried afresh: a new npm process, new connections.
        cmd = [npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", f"pnpm@{major}"]
        for attempt in range(1, 4):
            try:
                _run(cmd, prefix, f"installing pnpm@{major} with npm (attempt {attempt} of 3)", timeout=240)
                break
            except pytest.fail.Exception:
                if attempt == 3:
                    raise
        if not exe.exists():
            pytest.fail(f"npm installed pnpm@{major}, but {exe} is missing", pytrace=False)
        return exe


def write_workspace(root: Path, files: dict) -> None:
    """Lays out `files` (relative path -> JSON-able object or text) under root."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2) + "\n")


def install(root: Path, major: int, frozen: bool = False) -> None:
    _run([pnpm(major), "install", "--frozen-lockfile" if frozen else "--no-frozen-lockfile", "--prefer-offline",
          "--store-dir", STORE_DIR, "--reporter", "append-only"], root, f"pnpm {major} install in {root}")


def list_json(root: Path, major: int) -> list:
    proc = _run([pnpm(major), "list", "--json", "--recursive", "--depth", "Infinity"], root, f"pnpm {major} list")
    return json.loads(proc.stdout)


def dump(lockfile: Path, modules_yaml: Path | None = None) -> dict:
    """What qk reads from the lockfile (tests/tools/pnpm_lock_dump)."""
    if not os.access(DUMP, os.X_OK):
        pytest.fail(f"{DUMP} is not built: run `cmake --build {h.BUILD_DIR} --target pnpm_lock_dump` "
                    "(or set QK_BUILD_DIR)", pytrace=False)
    cmd = [DUMP, lockfile] + (["--modules", modules_yaml] if modules_yaml else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"pnpm_lock_dump failed on {lockfile}: {proc.stderr.strip()}", pytrace=False)
    return json.loads(proc.stdout)
