"""qk doctor: each mechanism the sandbox uses, tried, with a verdict and the fix; the exit status says
whether the mode asked for works here; the workspace's scratch directories checked."""

from __future__ import annotations

import os
import subprocess

import pytest

from audit_workspace import QK, make_workspace, qk

pytestmark = pytest.mark.privileged


def lines(stdout: str) -> dict[str, str]:
    """check name -> its line's status and verdict ("ok works", "FAIL ...")."""
    out = {}
    for line in stdout.splitlines()[1:]:
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0] in ("ok", "FAIL", "--"):
            out[parts[1]] = parts[0] + " " + parts[2]
    return out


def test_doctor_as_root_finds_everything_working(tmp_path):
    r = subprocess.run([str(QK), "doctor", "--sandbox=enforce"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    checks = lines(r.stdout)
    for name in ("cgroup2", "ebpf", "strace", "landlock", "userns", "uid_map", "overlay", "overlay-workspace"):
        assert checks.get(name, "").startswith("ok"), (name, r.stdout)
    assert "audit works: tasks are recorded with eBPF" in r.stdout
    assert "enforce works: each command runs over an overlay" in r.stdout


def test_doctor_as_an_ordinary_user_says_why_ebpf_cannot_load_and_how_to_fix_it(tmp_path):
    os.chmod(tmp_path, 0o777)
    r = subprocess.run(["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups", str(QK), "doctor"],
                       cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, HOME=str(tmp_path)))
    assert r.returncode == 0, r.stdout + r.stderr  # audit still works, with strace
    checks = lines(r.stdout)
    assert checks["ebpf"].startswith("FAIL"), r.stdout
    assert "fix: run as root or with CAP_BPF" in r.stdout
    assert checks["strace"].startswith("ok"), r.stdout
    assert "audit works: tasks are recorded with strace" in r.stdout


def test_doctor_fails_enforce_without_its_helper(tmp_path):
    env = dict(os.environ, QK_SANDBOX_EXEC=str(tmp_path / "missing"))
    r = subprocess.run([str(QK), "doctor", "--sandbox=enforce"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "enforce cannot work here" in r.stdout
    assert lines(r.stdout)["qk-sandbox-exec"].startswith("FAIL")
    # Audit does not need it.
    r = subprocess.run([str(QK), "doctor"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


def test_doctor_reports_a_scratch_directory_that_breaks_the_rules(tmp_path):
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {
        "build": {"command": "true", "qk:sandbox": {"scratch": ["{projectRoot}/cache"]}},
        "lint": {"command": "true", "qk:sandbox": {"scratch": ["{projectRoot}/cache/lint"]}}}}})
    os.symlink("/tmp", ws / "packages/app/cache")
    r = qk(ws, "doctor")
    assert r.returncode == 1, r.stdout + r.stderr
    scratch = lines(r.stdout)["scratch"]
    assert scratch.startswith("FAIL") and "packages/app/cache" in scratch, r.stdout
    assert "symbolic link" in scratch and "lint" in scratch, r.stdout


def test_doctor_refuses_an_unknown_mode(tmp_path):
    r = subprocess.run([str(QK), "doctor", "--sandbox=strict"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode != 0 and "the modes are audit and enforce" in r.stderr
