"""The fallback matrix (docs/restricted-machines.md), tried on this machine with the kernel mechanisms that make
restricted environments what they are, each applied to qk's process tree alone:

- no CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN (capabilities dropped with setpriv, as in a default container):
  strace records and the report says why eBPF did not; enforce holds by Landlock alone (no mount
  namespace without CAP_SYS_ADMIN);
- a read-only cgroup filesystem (a mount namespace remounting it read-only, as Docker mounts it): eBPF
  cannot give tasks cgroups, strace records, following each task's process tree;
- no namespaces (a seccomp filter as Docker's default profile: unshare and clone with CLONE_NEW* refused):
  enforce holds by Landlock alone and says why;
- no ptrace and no bpf (seccomp): with QK_RECORDER unset the run goes on unrecorded and says so; a
  recorder named fails.

Each runs `qk run-many --sandbox`, `--sandbox=enforce` and `qk doctor`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import qk_harness as h
import sandbox_report
from audit_workspace import QK, make_workspace

pytestmark = pytest.mark.privileged("ebpf")

DENY = h.BUILD_DIR / "tests" / "tools" / "deny-syscalls"
CAPS = "-bpf,-perfmon,-sys_admin"

BUILD = {
    "command": "cat src/main.txt other/notes.txt > /dev/null && mkdir -p dist && cp src/main.txt dist/main.txt",
    "inputs": ["{projectRoot}/src"],
    "outputs": ["{projectRoot}/dist"],
}
# Under enforce, build keeps to its declarations (other/notes.txt would be refused it).
KEPT = {**BUILD, "command": "mkdir -p dist && cp src/main.txt dist/main.txt"}
STRAY = {"command": "echo stray > stray.txt", "inputs": ["{projectRoot}/src"], "outputs": ["{projectRoot}/log"]}


def workspace(tmp_path: Path, build: dict = BUILD) -> Path:
    return make_workspace(tmp_path / "ws", {"app": {"root": ".", "targets": {"build": build, "stray": STRAY}}},
                          {"src/main.txt": "main\n", "other/notes.txt": "notes\n", ".gitignore": "dist\n"})


def no_bpf_caps() -> list[str]:
    if shutil.which("setpriv") is None:
        h.skip_or_fail("setpriv (util-linux) is not installed")
    return ["setpriv", f"--inh-caps={CAPS}", f"--bounding-set={CAPS}", "--"]


def read_only_cgroups() -> list[str]:
    mount = h.cgroup2_mount()
    assert mount, "no cgroup2 mount"
    # A private mount namespace: the remount is seen by qk's process tree alone.
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            f'mount -o remount,bind,ro {mount} && exec "$@"', "sh"]


def seccomp(*calls: str) -> list[str]:
    assert DENY.exists(), f"{DENY} is not built"
    return [str(DENY), *calls, "--"]


def run(prefix: list[str], ws: Path, *args: str, recorder: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "QK_RECORDER"}
    if recorder:
        env["QK_RECORDER"] = recorder
    return subprocess.run([*prefix, str(QK), *args], cwd=ws, capture_output=True, text=True, timeout=180, env=env)


def audit(prefix: list[str], tmp_path: Path, recorder: str | None = None):
    ws = workspace(tmp_path)
    report = tmp_path / "report.json"
    r = run(prefix, ws, "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report), recorder=recorder)
    doc = json.loads(report.read_text()) if report.exists() else None
    return r, doc


def enforce(prefix: list[str], tmp_path: Path):
    ws = workspace(tmp_path, KEPT)
    report = tmp_path / "enforce.json"
    r = run(prefix, ws, "run-many", "-t", "build,stray", "--sandbox=enforce", "--sandbox-report", str(report))
    doc = json.loads(report.read_text())
    assert sandbox_report.schema_errors(doc) == [], doc
    assert (ws / "dist/main.txt").read_text() == "main\n", r.stdout + r.stderr  # the declared output landed
    assert not (ws / "stray.txt").exists(), "a write outside the outputs was kept"
    return r, doc


def doctor(prefix: list[str], tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    r = run(prefix, tmp_path, "doctor", *args)
    checks = {}
    for line in r.stdout.splitlines()[1:]:
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0] in ("ok", "FAIL", "--"):
            checks[parts[1]] = parts[0] + " " + parts[2]
    return r, checks


def assert_audited_with_strace(r, doc, why: str):
    assert r.returncode == 0, r.stdout + r.stderr
    assert "qk: recording with strace, slower than eBPF, which cannot record here: " in r.stdout, r.stdout
    assert why in r.stdout, r.stdout
    assert doc["recorder"] == "strace" and why in doc["recorderFallback"], doc
    checked = sandbox_report.checked(doc)
    assert checked["tasks"]["app:build"]["findings"] == {"readsOutsideInputs": ["other/notes.txt"]}, doc
    assert doc["tasks"]["app:build"]["provenance"]["recorder"] == "strace"


# ---- no CAP_BPF / CAP_PERFMON / CAP_SYS_ADMIN ---------------------------------------------------------

def test_without_bpf_capabilities_strace_records_and_the_report_says_why(tmp_path):
    r, doc = audit(no_bpf_caps(), tmp_path)
    assert_audited_with_strace(r, doc, "Operation not permitted")
    assert "CAP_BPF" in doc["recorderFallback"], doc["recorderFallback"]


def test_without_bpf_capabilities_enforce_holds_over_the_overlay(tmp_path):
    # Root without CAP_SYS_ADMIN still makes a user namespace of its own, and mounts the overlay there.
    r, doc = enforce(no_bpf_caps(), tmp_path)
    assert "landlockOnly" not in doc, doc
    assert "qk: enforce holds tasks by Landlock alone" not in r.stdout, r.stdout
    assert doc["tasks"]["app:build"]["status"] == "enforced"
    assert doc["tasks"]["app:stray"]["findings"]["discardedWrites"] == ["stray.txt"], doc
    assert doc["tasks"]["app:stray"]["provenance"]["overlay"] is True


def test_without_cap_sys_admin_a_refused_file_stays_unreadable_to_root(tmp_path):
    # Without CAP_SYS_ADMIN the read mask is built inside the command's user namespace, where its stand-ins'
    # owner is mapped: root's command gives up CAP_DAC_OVERRIDE, so mode 000 refuses it as anyone.
    peek = {"command": "mkdir -p dist && stat -c '%a' other/notes.txt > dist/mode.txt && "
                       "(cat other/notes.txt > dist/leak.txt 2>dist/err.txt || true)",
            "inputs": ["{projectRoot}/src"], "outputs": ["{projectRoot}/dist"]}
    ws = workspace(tmp_path, peek)
    report = tmp_path / "enforce.json"
    r = run(no_bpf_caps(), ws, "run-many", "-t", "build", "--sandbox=enforce", "--sandbox-report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/mode.txt").read_text() == "0\n"
    assert (ws / "dist/leak.txt").read_text() == "" and "Permission denied" in (ws / "dist/err.txt").read_text()


def test_without_bpf_capabilities_doctor_says_strace_records(tmp_path):
    r, checks = doctor(no_bpf_caps(), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert checks["ebpf"].startswith("FAIL") and checks["strace"].startswith("ok"), r.stdout
    assert "audit works: tasks are recorded with strace" in r.stdout


# ---- a read-only cgroup filesystem ---------------------------------------------------------------------

def test_with_cgroups_read_only_strace_records_each_task_by_its_process_tree(tmp_path):
    """Two tasks at once, each starting a background grandchild that reads a file of its own: each read
    is attributed to the task whose tree it came from, as eBPF's cgroups would."""
    prefix = read_only_cgroups()
    targets = {f"t{i}": {"command": f"(cat other/t{i}.txt > /dev/null &) ; wait; sleep 0.2; cat src/main.txt >/dev/null",
                         "inputs": ["{projectRoot}/src"]} for i in (1, 2)}
    ws = make_workspace(tmp_path / "ws", {"app": {"root": ".", "targets": targets}},
                        {"src/main.txt": "m\n", "other/t1.txt": "1\n", "other/t2.txt": "2\n"})
    report = tmp_path / "report.json"
    r = run(prefix, ws, "run-many", "-t", "t1,t2", "--parallel", "2", "--sandbox", "--sandbox-report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(report.read_text())
    assert doc["recorder"] == "strace" and "read-only" in doc["recorderFallback"], doc
    for i in (1, 2):
        findings = doc["tasks"][f"app:t{i}"]["findings"]
        assert findings == {"readsOutsideInputs": [f"other/t{i}.txt"]}, doc
    r, doc = audit(prefix, tmp_path / "again")
    assert_audited_with_strace(r, doc, "read-only")


def test_with_cgroups_read_only_the_ebpf_recorder_named_fails_and_says_why(tmp_path):
    r, doc = audit(read_only_cgroups(), tmp_path, recorder="ebpf")
    assert r.returncode != 0 and doc is None, r.stdout + r.stderr
    assert "the eBPF recorder cannot record here" in r.stderr and "read-only" in r.stderr, r.stderr


def test_with_cgroups_read_only_doctor_names_the_cause_and_the_fix(tmp_path):
    r, checks = doctor(read_only_cgroups(), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert checks["cgroup2"].startswith("FAIL") and "read-only" in checks["cgroup2"], r.stdout
    assert "fix: give the container a writable cgroup filesystem" in r.stdout, r.stdout
    assert "audit works: tasks are recorded with strace" in r.stdout


# ---- no namespaces (Docker's seccomp profile) -----------------------------------------------------------

def test_without_namespaces_enforce_holds_by_landlock_alone_and_says_why(tmp_path):
    r, doc = enforce(seccomp("namespaces"), tmp_path)
    assert r.returncode != 0, "the stray write should fail its task"
    assert "a seccomp filter is in force" in doc["landlockOnly"], doc
    assert "qk: enforce holds tasks by Landlock alone, as the overlay cannot be mounted" in r.stdout, r.stdout
    assert doc["recorder"] == "ebpf"
    assert doc["tasks"]["app:stray"]["findings"]["refusedWrites"] == ["stray.txt"], doc
    r, checks = doctor(seccomp("namespaces"), tmp_path, "--sandbox=enforce")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "enforce works by Landlock alone" in r.stdout and "seccomp" in r.stdout, r.stdout


def test_without_namespaces_a_task_that_declares_its_network_is_refused_not_run_open(tmp_path):
    built = {**KEPT, "qk:sandbox": {"network": False}}
    ws = make_workspace(tmp_path / "ws", {"app": {"root": ".", "targets": {"build": built}}},
                        {"src/main.txt": "main\n", ".gitignore": "dist\n"})
    report = tmp_path / "net.json"
    r = run(seccomp("namespaces"), ws, "run-many", "-t", "build", "--sandbox=enforce", "--sandbox-report", str(report))
    assert r.returncode != 0, r.stdout + r.stderr
    task = json.loads(report.read_text())["tasks"]["app:build"]
    assert task["status"] == "refused", task
    assert "declares its network (false)" in task["reason"] and "none can be made here" in task["reason"], task
    assert not (ws / "dist/main.txt").exists(), "the task ran"
    r, checks = doctor(seccomp("namespaces"), tmp_path, "--sandbox=enforce")
    assert checks["netns"].startswith("-- no network namespace without a user namespace"), r.stdout


def test_without_namespaces_audit_is_unchanged(tmp_path):
    r, doc = audit(seccomp("namespaces"), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["recorder"] == "ebpf" and "recorderFallback" not in doc
    assert sandbox_report.checked(doc)["tasks"]["app:build"]["findings"] == {"readsOutsideInputs": ["other/notes.txt"]}


# ---- no ptrace and no bpf -------------------------------------------------------------------------------

def test_without_ptrace_or_bpf_the_run_goes_on_unrecorded_and_says_so(tmp_path):
    r, doc = audit(seccomp("ptrace", "bpf"), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "ws/dist/main.txt").exists(), "the task did not run"
    assert "qk: the sandbox cannot audit any task: no recorder works here: eBPF: " in r.stdout, r.stdout
    assert doc["recorder"] is None and "strace" in doc["recorderUnavailable"], doc
    assert doc["tasks"]["app:build"]["status"] == "notAudited"
    assert doc["tasks"]["app:build"]["provenance"]["recorder"] is None


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_without_ptrace_or_bpf_a_recorder_named_fails(recorder, tmp_path):
    r, doc = audit(seccomp("ptrace", "bpf"), tmp_path, recorder=recorder)
    assert r.returncode != 0 and doc is None, r.stdout + r.stderr
    name = {"ebpf": "eBPF", "strace": "strace"}[recorder]
    assert f"the {name} recorder cannot record here" in r.stderr, r.stderr
    assert not (tmp_path / "ws/dist").exists(), "a task ran though the recorder it named cannot record"


def test_without_ptrace_or_bpf_enforce_still_holds(tmp_path):
    r, doc = enforce(seccomp("ptrace", "bpf"), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr  # over an overlay, the stray write is discarded, not refused
    assert doc["recorder"] is None and "landlockOnly" not in doc
    assert doc["tasks"]["app:stray"]["findings"]["discardedWrites"] == ["stray.txt"], doc
    r, checks = doctor(seccomp("ptrace", "bpf"), tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr  # audit cannot record: the default mode fails
    assert "audit cannot record here: neither eBPF nor strace works" in r.stdout


def test_an_ordinary_user_without_user_namespaces_is_held_by_landlock_alone():
    """As Ubuntu 24.04's AppArmor does to unprivileged users (here a seccomp filter): the user namespace
    the overlay needs cannot be made, so enforce holds by Landlock alone and says why."""
    import pwd
    import tempfile
    if shutil.which("setpriv") is None:
        h.skip_or_fail("setpriv (util-linux) is not installed")
    base = Path(tempfile.mkdtemp(prefix="qk-matrix-user-"))  # outside /tmp's pytest tree, which nobody cannot enter
    try:
        os.chmod(base, 0o755)
        ws = workspace(base, KEPT)
        nobody = pwd.getpwnam("nobody")
        for dirpath, dirnames, filenames in os.walk(base):
            for name in [dirpath, *[os.path.join(dirpath, n) for n in dirnames + filenames]]:
                os.lchown(name, nobody.pw_uid, nobody.pw_gid)
        env = {k: v for k, v in os.environ.items() if k not in ("QK_RECORDER", "XDG_CACHE_HOME")}
        env["HOME"] = str(base)
        report = base / "r.json"
        r = subprocess.run(["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups", *seccomp("namespaces"),
                            str(QK), "run-many", "-t", "build,stray", "--sandbox=enforce", "--sandbox-report",
                            str(report)], cwd=ws, env=env, capture_output=True, text=True, timeout=120)
        doc = json.loads(report.read_text())
        assert "cannot make a user namespace" in doc["landlockOnly"], doc
        assert "qk: enforce holds tasks by Landlock alone" in r.stdout, r.stdout
        assert doc["recorder"] == "strace" and "recorderFallback" in doc  # no eBPF for nobody
        assert (ws / "dist/main.txt").read_text() == "main\n"
        assert doc["tasks"]["app:stray"]["findings"]["refusedWrites"] == ["stray.txt"], doc
        assert not (ws / "stray.txt").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
