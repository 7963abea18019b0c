"""Escape suite, qk itself (issue 38): a task cannot take the remote cache token from qk's process, and
no git that qk runs can execute what a task wrote into git's configuration."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import qk_harness as h
from audit_workspace import QK, make_workspace, qk, write
from enforce_workspace import MODES, enforce, escape_workspace, mode_env, target
from remote_servers import TEAM, TOKEN, SIGNATURE_KEY, servers  # noqa: F401

SECRETS = ("QK_REMOTE_CACHE_TOKEN", "QK_REMOTE_CACHE_SIGNATURE_KEY", TOKEN, SIGNATURE_KEY)

# Up the task's chain of parents to pid 1: each one's name and environment (what the task can read of it).
WALK = ("p=$$; while [ \"$p\" -gt 1 ]; do echo \"== $(cat /proc/$p/comm)\"; "
        "tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null; p=$(awk '/^PPid:/ {print $2}' /proc/$p/status); done; true")


# -- the token ---------------------------------------------------------------------------------------------

@pytest.mark.privileged  # audit records with eBPF or strace
@pytest.mark.parametrize("mode", ["plain", "audit"])
def test_the_token_is_gone_from_qks_environ_block_and_still_used(servers, tmp_path, mode):
    # unsetenv drops the pointer only: /proc/<qk>/environ reads the block execve laid out, where the token
    # stayed. It is overwritten there, and qk still uploads with the copy it holds.
    srv = servers("turbo")
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {
        "walk": {"command": WALK, "cache": False},
        "build": {"command": "mkdir -p packages/app/dist && echo built > packages/app/dist/out.txt",
                  "outputs": ["{projectRoot}/dist"], "cache": True}}}},
        files={"packages/app/src.txt": "src\n", ".gitignore": "dist/\n"})
    sandbox = [] if mode == "plain" else ["--sandbox"]
    r = qk(ws, "run-many", "-t", "walk", *sandbox, env=srv.env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "app:walk | == qk" in r.stdout, r.stdout  # the walk reached qk's own environment
    assert not [s for s in SECRETS if s in r.stdout], r.stdout
    r = qk(ws, "run-many", "-t", "build", *sandbox, env=srv.env())
    assert r.returncode == 0, r.stdout + r.stderr
    team = srv.storage / TEAM
    uploaded = sorted(p.name for p in team.iterdir()) if team.exists() else []
    # The default policy uploads verified results: an audited clean task's, never a plain run's.
    assert bool(uploaded) == (mode == "audit"), (uploaded, r.stdout)


MEMORY_PROBE = r"""
import os, re, sys
p = os.getpid()
while p > 1:
    with open(f"/proc/{p}/status") as f:
        status = f.read()
    if re.search(r"^Name:\s+qk$", status, re.M):
        break
    p = int(re.search(r"^PPid:\s+(\d+)", status, re.M).group(1))
else:
    sys.exit("no qk among the task's parents")
token = open(sys.argv[1], "rb").read().strip()
def environ():
    return token in open(f"/proc/{p}/environ", "rb").read()
def memory():
    with open(f"/proc/{p}/maps") as maps, open(f"/proc/{p}/mem", "rb", buffering=0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if "r" not in fields[1] or end - start > 1 << 30:
                continue
            try:
                mem.seek(start)
                if token in mem.read(end - start):
                    return True
            except OSError:
                continue
    return False
for what, look in (("environ", environ), ("memory", memory)):
    try:
        print(what, "found the token" if look() else "read, no token")
    except OSError as e:
        print(what, "refused:", e.strerror)
"""


def as_nobody(root: Path) -> list[str]:
    shutil.chown(root, "nobody", "nogroup")
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            shutil.chown(os.path.join(dirpath, name), "nobody", "nogroup")
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all"]


@pytest.mark.privileged  # root, to run qk as another user
def test_a_task_of_qks_own_user_cannot_read_qks_memory_while_it_holds_a_token(tmp_path):
    # A plain run's task runs as qk's user, which may read qk's /proc/<pid>/mem and environ unless qk is
    # undumpable; qk is so while it holds a remote cache secret, and dumpable (core dumps, debuggers) else.
    if os.geteuid() != 0:
        h.skip_or_fail("needs root to run qk as nobody")
    secret = "tok-nobody-" + os.urandom(8).hex()  # in a file: a variable would sit in qk's environ too
    home = Path(tempfile.mkdtemp(prefix="qk-nobody-", dir="/tmp"))
    try:
        os.chmod(home, 0o755)
        ws = make_workspace(home / "ws", {"app": {"root": "packages/app", "targets": {
            "probe": {"command": "python3 tools/probe.py tools/token.txt", "cache": False}}}},
            files={"tools/probe.py": MEMORY_PROBE, "tools/token.txt": secret})
        run_as = as_nobody(home)

        def probe(env: dict) -> str:
            e = {"PATH": "/usr/bin:/bin", "HOME": str(home), **env}
            r = subprocess.run([*run_as, str(QK), "run-many", "-t", "probe"], cwd=ws, env=e, capture_output=True,
                               text=True, timeout=120)
            assert r.returncode == 0, r.stdout + r.stderr
            return r.stdout

        # Without a secret: qk's user reads it (so the probe can find what is there to find).
        out = probe({})
        assert "app:probe | environ read, no token" in out, out
        yama = Path("/proc/sys/kernel/yama/ptrace_scope")
        if not yama.exists() or yama.read_text().strip() == "0":  # Yama >= 1 refuses a non-descendant's mem
            assert "app:probe | memory read, no token" in out, out
        out = probe({"QK_REMOTE_CACHE_TOKEN": secret, "QK_REMOTE_CACHE_URL": "http://127.0.0.1:9"})
        assert "app:probe | environ refused: Permission denied" in out, out
        assert "app:probe | memory refused: Permission denied" in out, out
        assert "found the token" not in out, out
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.privileged
@pytest.mark.parametrize("mode", MODES)
def test_enforce_works_while_qk_is_undumpable(servers, tmp_path, mode):
    # Undumpable, qk's /proc/<pid> is root's: qk-sandbox-exec reaches the run's mirror through
    # /proc/<qk>/fd/<n> (over the overlay, as root). A refused read, an allowed one, an output kept.
    srv = servers("turbo")
    command = "mkdir -p dist && cat src/main.txt > dist/out.txt && (cat other/secret.txt >> dist/out.txt 2>&1 || true)"
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    env = srv.env(**mode_env(mode))
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["tasks"]["app:t"]["status"] == "enforced", doc
    out = (ws / "dist/out.txt").read_text()
    assert out.startswith("main\n") and "TOP-SECRET" not in out, out


@pytest.mark.privileged  # root, to run qk as another user
@pytest.mark.parametrize("mode", MODES)
def test_enforce_as_another_user_works_while_qk_is_undumpable(mode):
    # Without root there is no mirror, but the helper, its user namespace and its maps are the same user's
    # as qk: none of them may need qk's /proc/<pid>, which only root can open while qk is undumpable.
    if os.geteuid() != 0:
        h.skip_or_fail("needs root to run qk as nobody")
    home = Path(tempfile.mkdtemp(prefix="qk-nobody-", dir="/tmp"))
    try:
        os.chmod(home, 0o755)
        command = ("mkdir -p dist && cat src/main.txt > dist/out.txt && "
                   "(cat other/secret.txt >> dist/out.txt 2>&1 || true)")
        ws = escape_workspace(home / "ws", {"t": target(command)})
        run_as = as_nobody(home)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **mode_env(mode)}
        doctor = subprocess.run([*run_as, str(QK), "doctor", "--sandbox=enforce"], cwd=ws, env=env,
                                capture_output=True, text=True, timeout=120)
        if doctor.returncode != 0:  # a machine that refuses an ordinary user's namespaces (sysctl, AppArmor)
            h.not_applicable("enforce as an ordinary user: " + doctor.stdout[-400:])
        env["QK_REMOTE_CACHE_TOKEN"] = "tok-" + os.urandom(8).hex()
        r = subprocess.run([*run_as, str(QK), "run-many", "-t", "t", "--sandbox=enforce"], cwd=ws, env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "1 read refused" in r.stdout, r.stdout
        out = (ws / "dist/out.txt").read_text()
        assert out.startswith("main\n") and "TOP-SECRET" not in out, out
    finally:
        shutil.rmtree(home, ignore_errors=True)


# -- the git qk runs -----------------------------------------------------------------------------------------

def git(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(ws)})


def hostile_git_workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose configuration (as a task could write it) names a program for every hook git
    has: fsmonitor, hooks, an external diff, a textconv, a filter driver, a pager. Each appends to the
    marker, outside the workspace."""
    marker = tmp_path / "marker"
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat\n")
    evil.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "post-checkout", "post-index-change", "fsmonitor-watchman", "pre-auto-gc"):
        shutil.copy(evil, hooks / hook)
    ws = make_workspace(tmp_path / "ws", {
        "lib": {"root": "packages/lib", "targets": {"build": {"command": "echo built-lib", "cache": False}}},
        "app": {"root": "packages/app", "targets": {"build": {"command": "echo built-app", "cache": False}},
                "depends": ["lib"]},
    }, files={"packages/lib/src.ts": "1\n", "packages/app/src.ts": "1\n", ".gitattributes": "* filter=evil diff=evil\n"})
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "base")
    git(ws, "checkout", "-q", "-b", "feature")
    with open(ws / ".git/config", "a") as f:
        f.write(f"[core]\n\tfsmonitor = {evil}\n\thooksPath = {hooks}\n\tpager = {evil}\n"
                f"[diff]\n\texternal = {evil}\n[diff \"evil\"]\n\ttextconv = {evil}\n\tcommand = {evil}\n"
                f"[filter \"evil\"]\n\tclean = {evil}\n\tsmudge = {evil}\n\tprocess = {evil}\n"
                f"[filter \"with.dots\"]\n\tclean = {evil}\n")
    return ws, marker


def test_no_git_qk_runs_executes_what_gits_configuration_names(tmp_path):
    ws, marker = hostile_git_workspace(tmp_path)
    write(ws, "packages/lib/src.ts", "2\n")  # stat and content changed: git diff hashes it through filters
    write(ws, "packages/app/new.ts", "x\n")  # untracked
    r = qk(ws, "affected", "-t", "build")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "qk affected: 2 changed files; affected: app, lib" in r.stdout, r.stdout
    assert "built-lib" in r.stdout and "built-app" in r.stdout
    r = qk(ws, "affected", "-t", "build", "--base", "main", "--head", "HEAD")
    assert r.returncode == 0 and "affected: none" in r.stdout, r.stdout + r.stderr
    report = tmp_path / "run.json"
    r = qk(ws, "run-many", "-t", "build", "--report", str(report))  # its run identity asks git for HEAD
    assert r.returncode == 0, r.stdout + r.stderr
    head = git(ws, "rev-parse", "HEAD").stdout.strip()
    assert head in report.read_text(), report.read_text()
    assert not marker.exists(), marker.read_text()
    # The same configuration runs the program for git as a user runs it: the test's hostile setup works.
    git(ws, "status", "--short")
    assert marker.exists()


def test_a_filter_driver_git_c_cannot_spell_is_refused_not_run(tmp_path):
    ws, marker = hostile_git_workspace(tmp_path)
    with open(ws / ".git/config", "a") as f:
        f.write(f"[filter \"a=b\"]\n\tclean = {tmp_path / 'evil.sh'}\n")
    write(ws, ".gitattributes", "* filter=a=b\n")
    write(ws, "packages/lib/src.ts", "2\n")
    r = qk(ws, "affected", "-t", "build")
    assert r.returncode != 0
    assert 'git\'s configuration names a filter driver "a=b", whose name git\'s -c option cannot spell' in r.stderr, \
        r.stderr
    assert not marker.exists(), marker.read_text()
