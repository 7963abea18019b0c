"""tests/fixtures/real-tools installed for the tests: a pnpm 9 + Nx workspace whose tasks run real vite 5,
vitest 2 (with coverage-v8), tsc, eslint 9 and publint, at the versions its committed lockfile pins.

The fixture is installed ONCE per build dir, with pnpm 9 (pnpm_install.pnpm) from the npm registry, frozen
to its lockfile, into `<build>/tools/real-tools/<digest>/ws`, where <digest> hashes the fixture's files: a
changed fixture installs again, and the install of an older one is removed. A lock serialises two runs
sharing a build dir. A registry failure fails the test, saying so (pnpm_install._run).

Each test gets its own copy of the installed workspace (`copy_workspace`): `cp -al` hard-links every file,
then every file outside `node_modules/.pnpm` is copied again as a file of its own, so a test (or a task)
that writes one never reaches the installed template; what stays shared is the packages' files in
`node_modules/.pnpm`, which pnpm itself hard-links from its store and nothing writes in place. The shims
pnpm writes in each `node_modules/.bin` name the install's absolute path (NODE_PATH); they are written
again with the copy's. A copy takes about half a second where `cp -a` takes 3 to 4 s (and a fresh offline
`pnpm install` from the store about 5 s)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import pnpm_install
import qk_harness as h

FIXTURE = h.SOURCE_DIR / "tests" / "fixtures" / "real-tools"
CACHE_DIR = pnpm_install.TOOLS_DIR / "real-tools"
PNPM_MAJOR = 9
MANIFEST = "installed.json"  # written last: an install without it is incomplete and made again

# What running the fixture by hand in the source tree leaves there; never part of what is installed.
GENERATED = ("node_modules", "dist", "coverage", ".qk", ".git")


def _fixture_files() -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(FIXTURE):
        dirnames[:] = sorted(d for d in dirnames if d not in GENERATED)
        out += [Path(dirpath) / f for f in sorted(filenames) if not f.endswith(".tgz")]
    return out


def fixture_digest() -> str:
    digest = hashlib.sha256(f"pnpm{PNPM_MAJOR}\n".encode())
    for path in _fixture_files():
        digest.update(str(path.relative_to(FIXTURE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _files_to_own(ws: Path) -> tuple[list[str], list[str]]:
    """(files a copy must own: every regular file outside node_modules/.pnpm; files naming ws's absolute
    path, which a copy writes again with its own: pnpm's .bin shims), as paths relative to ws."""
    own = []
    for dirpath, dirnames, filenames in os.walk(ws):
        rel_dir = os.path.relpath(dirpath, ws)
        if rel_dir == "node_modules":
            dirnames[:] = [d for d in dirnames if d != ".pnpm"]
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                own.append(os.path.normpath(os.path.join(rel_dir, name)))
    grep = subprocess.run(["grep", "-rlFZ", "--", str(ws), str(ws)], capture_output=True)
    naming = sorted(os.path.relpath(p.decode(), ws) for p in grep.stdout.split(b"\0") if p)
    return sorted(own), naming


def installed() -> Path:
    """The installed fixture (its workspace directory), installing it first if this build dir has none."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    digest = fixture_digest()
    base = CACHE_DIR / digest
    ws = base / "ws"
    with open(CACHE_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs sharing a build dir install once
        if (base / MANIFEST).exists():
            return ws
        for old in CACHE_DIR.iterdir():  # an older fixture's install, or this one left half done
            if old.name != ".lock":
                shutil.rmtree(old)
        ws.parent.mkdir()
        shutil.copytree(FIXTURE, ws, ignore=shutil.ignore_patterns(*GENERATED, "*.tgz"))
        subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
        start = time.monotonic()
        pnpm_install.install(ws, PNPM_MAJOR, frozen=True)
        seconds = time.monotonic() - start
        own, naming = _files_to_own(ws)
        (base / MANIFEST).write_text(json.dumps(
            {"root": str(ws), "installSeconds": round(seconds, 1), "own": own, "naming": naming}, indent=1))
        print(f"real-tools: installed {FIXTURE} into {ws} in {seconds:.1f} s")
        return ws


def manifest(ws: Path) -> dict:
    return json.loads((ws.parent / MANIFEST).read_text())


def copy_workspace(dest: Path) -> Path:
    """A fresh copy of the installed fixture at dest (which must not exist), as described above."""
    template = installed()
    info = manifest(template)
    dest = Path(os.path.realpath(dest.parent)) / dest.name
    subprocess.run(["cp", "-al", str(template), str(dest)], check=True)
    old, new = str(template).encode(), str(dest).encode()
    naming = set(info["naming"])
    for rel in set(info["own"]) | naming:
        path = dest / rel
        st = os.stat(path)
        data = path.read_bytes()
        if rel in naming:
            data = data.replace(old, new)
        path.unlink()  # the copy's own file from here on, not the template's inode
        path.write_bytes(data)
        os.chmod(path, st.st_mode & 0o7777)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return dest


def tool_env() -> dict[str, str]:
    """What a qk run over the fixture needs in its environment: pnpm 9 on PATH (the `pnpm exec` commands,
    and publint, which runs `pnpm pack`), pnpm not asking the registry whether it is the latest, and no
    colours: vite and vitest colour their output when CI is set (as on CI), which the assertions on their
    lines would not match."""
    pnpm_bin = pnpm_install.pnpm(PNPM_MAJOR).parent
    return {"PATH": f"{pnpm_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}", "npm_config_update_notifier": "false",
            "NO_COLOR": "1"}


@pytest.fixture
def real_workspace(tmp_path) -> Path:
    """A fresh copy of the installed fixture, for one test."""
    return copy_workspace(tmp_path / "real-tools")
