"""--record and QK_RECORD=audit (the spec's "Auditing recorded runs"): a task with qk:ultracache is recorded,
what it read outside its key is saved with its cached result, and a later run restores that result only
while every recorded read still holds what it held. Under eBPF and strace alike; and --report, the run as
JSON, validated against its schema."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import jsonschema
import pytest

import qk_harness as h
import sandbox_report
from audit_workspace import audit_text, make_workspace, qk

RECORDERS = pytest.mark.parametrize("recorder", h.RECORDERS)
RUN_SCHEMA = json.loads((h.SOURCE_DIR / "schemas" / "run-report.schema.json").read_text())

# A build that stamps the branch it was built from: .git/HEAD is no input of it, as in the spec.
STAMP = {
    "command": "mkdir -p dist && cp src/main.txt dist/main.txt && cat .git/HEAD > dist/stamp.txt",
    "inputs": ["{projectRoot}/src/**"],
    "outputs": ["{projectRoot}/dist"],
    "cache": True,
    "qk:ultracache": {},
}


def stamp_workspace(tmp_path: Path, target: dict | None = None) -> Path:
    return make_workspace(tmp_path / "ws", {"app": {"root": ".", "targets": {"build": target or STAMP}}},
                          {"src/main.txt": "main\n", ".git/HEAD": "ref: refs/heads/main\n", ".gitignore": "dist\n"})


def run(ws: Path, *args: str, recorder: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    r = qk(ws, "run-many", "-t", "build", *args, recorder=recorder, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def restored(r: subprocess.CompletedProcess) -> bool:
    return "(1 restored from the cache)" in r.stdout


def report(path: Path) -> dict:
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, RUN_SCHEMA)
    return doc


@RECORDERS
def test_a_recorded_read_keys_the_result(recorder, tmp_path):
    ws = stamp_workspace(tmp_path)
    first = run(ws, "--record", recorder=recorder)
    assert not restored(first), first.stdout
    assert "not cached" not in first.stdout, first.stdout
    assert restored(run(ws, recorder=recorder))  # unchanged: restored, with or without --record
    assert restored(run(ws, "--record", recorder=recorder))

    # The branch changes: the result stamped "main" must not come back.
    (ws / ".git/HEAD").write_text("ref: refs/heads/feature\n")
    again = run(ws, "--report", str(tmp_path / "run.json"), recorder=recorder)
    assert not restored(again), again.stdout
    assert "qk: a recorded read changed: .git/HEAD changed" in again.stdout, again.stdout
    assert (ws / "dist/stamp.txt").read_text() == "ref: refs/heads/feature\n"
    task = report(tmp_path / "run.json")["tasks"]["app:build"]
    assert task["source"] == "ran" and task["ranBecause"] == "a recorded read changed: .git/HEAD changed", task
    # Run without --record, it saved nothing: the recordings still key the result, so nothing plain is
    # stored under the key that a later run could replay unchecked.
    assert "the result was not cached: its results are keyed by what it read, which only --record saves" in \
        again.stdout, again.stdout
    assert not restored(run(ws, recorder=recorder))


@RECORDERS
def test_without_record_in_the_first_run_the_stale_result_comes_back(recorder, tmp_path):
    # What --record is for: a plain entry, keyed by the declarations alone, replays the old stamp.
    ws = stamp_workspace(tmp_path)
    run(ws, "--sandbox", recorder=recorder)  # an audit's recording saves nothing for the cache
    (ws / ".git/HEAD").write_text("ref: refs/heads/feature\n")
    r = run(ws, recorder=recorder)
    assert restored(r), r.stdout
    assert (ws / "dist/stamp.txt").read_text() == "ref: refs/heads/main\n"


@RECORDERS
def test_two_read_sets_under_one_key_both_restore(recorder, tmp_path):
    ws = stamp_workspace(tmp_path)
    head = ws / ".git/HEAD"
    run(ws, "--record", recorder=recorder)
    head.write_text("ref: refs/heads/feature\n")
    assert not restored(run(ws, "--record", recorder=recorder))
    for branch in ("main", "feature", "main"):
        head.write_text(f"ref: refs/heads/{branch}\n")
        r = run(ws, recorder=recorder)
        assert restored(r), (branch, r.stdout)
        assert (ws / "dist/stamp.txt").read_text() == f"ref: refs/heads/{branch}\n"
    shown = qk(ws, "show", "task", "app:build")
    assert shown.returncode == 0, shown.stderr
    assert "Recorded reads, checked before a result is restored (2 sets, newest first):" in shown.stdout
    assert shown.stdout.count("  .git/HEAD\n") == 2, shown.stdout
    sets = json.loads(qk(ws, "show", "task", "app:build", "--json").stdout)["recordedReads"]
    assert [s["reads"][0]["path"] for s in sets] == [".git/HEAD", ".git/HEAD"], sets


@RECORDERS
def test_a_file_looked_for_and_not_found_keys_the_result_by_its_absence(recorder, tmp_path):
    ws = stamp_workspace(tmp_path, dict(STAMP, command="mkdir -p dist && (cat override.txt 2>/dev/null || "
                                                        "echo default) > dist/stamp.txt"))
    run(ws, "--record", recorder=recorder)
    assert restored(run(ws, recorder=recorder))
    (ws / "override.txt").write_text("override\n")
    r = run(ws, recorder=recorder)
    assert "qk: a recorded read changed: override.txt appeared" in r.stdout, r.stdout
    assert (ws / "dist/stamp.txt").read_text() == "override\n"


@RECORDERS
def test_an_incomplete_recording_saves_nothing_and_says_so(recorder, tmp_path):
    ws = stamp_workspace(tmp_path, dict(STAMP, command="mkdir -p dist alias && unshare -m --propagation private "
                                                       "/bin/sh -c 'mount --bind src alias && cat alias/main.txt' "
                                                       "> dist/main.txt"))
    r = run(ws, "--record", "--sandbox", recorder=recorder)
    assert "qk: the result was not cached: the recording is incomplete:" in r.stdout, r.stdout
    assert "called mount" in r.stdout
    assert "app:build: the recording is incomplete" in audit_text(r.stdout)  # not audited either
    assert not (ws / ".qk/cache/read-sets").exists() or not any((ws / ".qk/cache/read-sets").iterdir())
    assert not restored(run(ws, recorder=recorder))


@RECORDERS
def test_qk_record_audit_is_record_and_sandbox_and_counts_restored_tasks(recorder, tmp_path):
    a, b = stamp_workspace(tmp_path / "a"), stamp_workspace(tmp_path / "b")
    for ws in (a, b):
        (ws / "other.txt").write_text("notes\n")
        project = json.loads((ws / "project.json").read_text())
        project["targets"]["build"]["command"] += " && cat other.txt > /dev/null"
        (ws / "project.json").write_text(json.dumps(project))
    by_flag = run(a, "--record", "--sandbox", "--sandbox-report", str(tmp_path / "a.json"), recorder=recorder)
    by_env = run(b, "--sandbox-report", str(tmp_path / "b.json"), recorder=recorder, env={"QK_RECORD": "audit"})
    assert audit_text(by_flag.stdout) == audit_text(by_env.stdout)
    assert audit_text(by_env.stdout).startswith("Sandbox audit: 1 of 1 task went beyond what it declares\n")
    a_doc, b_doc = (json.loads((tmp_path / f"{n}.json").read_text()) for n in "ab")
    assert sandbox_report.checked(a_doc) == sandbox_report.checked(b_doc)
    assert a_doc["run"]["id"] != b_doc["run"]["id"]  # two runs, each its own
    manifests = [sorted(p.name for p in (ws / ".qk/cache/read-sets").iterdir()) for ws in (a, b)]
    assert manifests[0] == manifests[1] and len(manifests[0]) == 1, manifests
    sets = [json.loads(next((ws / ".qk/cache/read-sets").iterdir()).read_text())["sets"] for ws in (a, b)]
    # One recording served both: the read set saved is the same, and holds what the audit found.
    assert sets[0][0]["reads"] == sets[1][0]["reads"], sets
    assert [r["path"] for r in sets[0][0]["reads"]] == [".git/HEAD", "other.txt"], sets

    again = run(b, "--report", str(tmp_path / "run.json"), recorder=recorder, env={"QK_RECORD": "audit"})
    assert restored(again), again.stdout
    assert audit_text(again.stdout) == ("Sandbox audit: no task was audited\n"
                                        "  1 task restored from the cache, so not audited: app:build\n")
    doc = report(tmp_path / "run.json")
    assert doc["tasks"]["app:build"]["source"] in ("restored", "restoredInPlace")
    assert "audit" not in doc["tasks"]["app:build"]


@RECORDERS
def test_a_task_without_ultracache_is_recorded_for_the_audit_alone(recorder, tmp_path):
    target = {k: v for k, v in STAMP.items() if k != "qk:ultracache"}
    ws = stamp_workspace(tmp_path, target)
    r = run(ws, "--record", "--sandbox", recorder=recorder)
    assert "unkeyed" not in r.stdout and ".git/HEAD (1 task: app:build)" in audit_text(r.stdout), r.stdout
    assert not (ws / ".qk/cache/read-sets").exists()
    (ws / ".git/HEAD").write_text("ref: refs/heads/feature\n")
    assert restored(run(ws, recorder=recorder))  # keyed by its declarations alone, as without --record


def test_the_report_says_why_each_task_ran_and_validates(tmp_path):
    ws = make_workspace(tmp_path / "ws", {
        "lib": {"root": "libs/lib", "targets": {"build": {
            "command": "mkdir -p libs/lib/dist && cp libs/lib/src/a.txt libs/lib/dist/",
            "inputs": ["{projectRoot}/src/**"], "outputs": ["{projectRoot}/dist"], "cache": True}}},
        "app": {"root": "apps/app", "depends": ["lib"], "targets": {"build": {
            "command": "false", "inputs": ["{projectRoot}/src/**"], "cache": True}}},
    }, {"libs/lib/src/a.txt": "a\n", "apps/app/src/b.txt": "b\n"})
    out = tmp_path / "run.json"
    r = qk(ws, "run-many", "-t", "build", "--report", str(out))
    assert r.returncode == 1, r.stdout + r.stderr
    doc = report(out)
    assert doc["summary"] == {"tasks": 2, "succeeded": 1, "failed": 1, "restored": 0, "ran": 2}, doc
    lib, app = doc["tasks"]["lib:build"], doc["tasks"]["app:build"]
    assert lib["status"] == "succeeded" and lib["source"] == "ran" and lib["ranBecause"] == "no cache entry for its key"
    assert re.fullmatch(r"[0-9a-f]{32}", lib["hash"]), lib
    assert app["status"] == "failed", app
    assert list(doc["tasks"]) == ["lib:build", "app:build"]

    (ws / "libs/lib/src/a.txt").write_text("changed\n")
    r = qk(ws, "run-many", "-t", "build", "--projects", "lib", "--report", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert report(out)["tasks"]["lib:build"]["ranBecause"] == \
        "input libs/lib/src/a.txt changed since its last stored result"
    r = qk(ws, "run-many", "-t", "build", "--projects", "lib", "--report", str(out))
    lib = report(out)["tasks"]["lib:build"]
    assert lib["source"] == "restoredInPlace" and "ranBecause" not in lib, lib
    r = qk(ws, "run-many", "-t", "build", "--projects", "lib", "--skip-cache", "--report", str(out))
    assert report(out)["tasks"]["lib:build"]["ranBecause"] == "--skip-cache"


def test_record_with_enforce_and_a_bad_qk_record_are_errors(tmp_path):
    ws = stamp_workspace(tmp_path)
    r = qk(ws, "run-many", "-t", "build", "--record", "--sandbox=enforce")
    assert r.returncode != 0
    assert "--record cannot be combined with --sandbox=enforce yet" in r.stderr, r.stderr
    r = qk(ws, "run-many", "-t", "build", env={"QK_RECORD": "yes"})
    assert r.returncode != 0
    assert "QK_RECORD=yes: the only value is audit" in r.stderr, r.stderr
    r = qk(ws, "run-many", "-t", "build", "--report", str(tmp_path / "missing" / "run.json"))
    assert r.returncode != 0 and "--report" in r.stderr and "does not exist" in r.stderr, r.stderr


@pytest.mark.privileged
def test_where_no_recorder_works_a_recorded_run_goes_on_and_a_named_one_fails():
    """An ordinary user without strace on its PATH: eBPF cannot load and strace is missing."""
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="qk-norecord-")))  # where nobody can reach it
    try:
        ws = stamp_workspace(base)
        for p in [base, *base.rglob("*")]:
            os.chmod(p, 0o777 if p.is_dir() else 0o666)
        tools = base / "bin"
        tools.mkdir()
        for tool in ("cat", "mkdir", "cp"):
            (tools / tool).symlink_to(shutil.which(tool))

        def as_nobody(recorder: str, *args: str) -> subprocess.CompletedProcess:
            env = {"PATH": str(tools), "QK_RECORDER": recorder, "HOME": str(base), "QK_RECORD": "audit"}
            return subprocess.run(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                   str(h.BUILD_DIR / "qk"), "run-many", "-t", "build", *args], cwd=ws,
                                  capture_output=True, text=True, timeout=120, env=env)

        r = as_nobody("auto")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "qk: this run goes on unrecorded and unaudited: no recorder works here" in r.stdout, r.stdout
        assert (ws / "dist/stamp.txt").exists()
        r = as_nobody("strace")
        assert r.returncode != 0, r.stdout + r.stderr
        assert "the strace recorder cannot record here: strace is not installed" in r.stderr, r.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)


@RECORDERS
def test_record_does_not_trust_a_result_stored_without_it(recorder, tmp_path):
    # A cache filled by runs without --record holds results keyed by the declarations alone. Turning
    # --record on must not restore one of those (it may be stale: here the branch changed since), and once
    # the result is saved with its reads the plain entry is gone, so losing the manifest cannot bring it back.
    ws = stamp_workspace(tmp_path)
    run(ws, recorder=recorder)  # plain entry, stamped main
    (ws / ".git/HEAD").write_text("ref: refs/heads/feature\n")
    assert restored(run(ws, recorder=recorder))  # without --record: the stale result, as before
    r = run(ws, "--record", recorder=recorder)
    assert not restored(r), r.stdout
    assert (ws / "dist/stamp.txt").read_text() == "ref: refs/heads/feature\n"
    key = json.loads(qk(ws, "show", "task", "app:build", "--json").stdout)["hash"]
    assert not (ws / ".qk/cache" / key).exists()
    assert restored(run(ws, recorder=recorder))  # through the saved reads
    shutil.rmtree(ws / ".qk/cache/read-sets")
    assert not restored(run(ws, recorder=recorder))
