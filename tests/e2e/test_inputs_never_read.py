"""inputsNeverRead: a task's declared input files that runs recorded with --record held in its key and
never read, once nx.json's qk.inputsNeverReadAfterRuns such runs counted them. A candidate to narrow
the key, listed in --sandbox-report, never applied; under eBPF and strace alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import qk_harness as h
from audit_workspace import NX_JSON, make_workspace, qk, sandbox

# Reads src/used.txt always and src/sometimes.txt when SOMETIMES is set; never opens src/unused.txt nor
# src/deep/also-unused.txt; fails when FAIL is set, before reading anything.
BUILD = {
    "command": "test -z \"$FAIL\" && cat src/used.txt > /dev/null "
               "&& { test -z \"$SOMETIMES\" || cat src/sometimes.txt > /dev/null; }",
    "inputs": ["{projectRoot}/src/**/*", {"env": "SOMETIMES"}, {"env": "FAIL"}],
    "cache": True,
}


def workspace(tmp_path: Path, after_runs: int | None = 2) -> Path:
    nx = json.loads(json.dumps(NX_JSON))
    if after_runs is not None:
        nx["qk"] = {"inputsNeverReadAfterRuns": after_runs}
    return make_workspace(tmp_path / "ws", {"app": {"root": ".", "targets": {"build": BUILD}}},
                          {"src/used.txt": "u\n", "src/sometimes.txt": "s\n", "src/unused.txt": "x\n",
                           "src/deep/also-unused.txt": "y\n"}, nx=nx)


def recorded(ws: Path, recorder: str, tmp_path: Path, n: int, env: dict | None = None, *more: str):
    r, doc = sandbox(ws, "build", recorder, tmp_path / f"report-{n}.json", "--record", "--skip-nx-cache", *more,
                     env=env)
    return r, doc["tasks"]["app:build"]


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_declared_inputs_no_recorded_run_read_are_listed_after_enough_runs(recorder, tmp_path):
    ws = workspace(tmp_path)
    r, task = recorded(ws, recorder, tmp_path, 1)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "inputsNeverRead" not in task, task  # one run counted: too few to say
    # Restored, it ran nothing: no second run is counted.
    r, doc = sandbox(ws, "build", recorder, tmp_path / "restored-early.json", "--record")
    assert doc["tasks"]["app:build"]["status"] == "restored" and "inputsNeverRead" not in doc["tasks"]["app:build"]

    # The second run reads src/sometimes.txt: it is used, though the first run did not read it.
    r, task = recorded(ws, recorder, tmp_path, 2, env={"SOMETIMES": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert task["inputsNeverRead"] == ["src/deep/also-unused.txt", "src/unused.txt"], task
    assert "declared inputs no recorded run read, which its key could leave out (inputsNeverRead in " \
           "--sandbox-report): app:build (2 files)" in r.stdout, r.stdout

    # Restored from the cache under --record, it ran nothing: the counts earlier runs kept still list
    # them, and add nothing.
    r, doc = sandbox(ws, "build", recorder, tmp_path / "restored.json", "--record")
    task = doc["tasks"]["app:build"]
    assert task["status"] == "restored" and task["inputsNeverRead"] == ["src/deep/also-unused.txt", "src/unused.txt"], task
    r, doc = sandbox(ws, "build", recorder, tmp_path / "restored-2.json", "--record")
    assert doc["tasks"]["app:build"]["inputsNeverRead"] == task["inputsNeverRead"]

    # A run without --record reads nothing into the counts, and lists nothing, run or restored.
    r, doc = sandbox(ws, "build", recorder, tmp_path / "plain.json", "--skip-nx-cache")
    assert "inputsNeverRead" not in doc["tasks"]["app:build"], doc["tasks"]["app:build"]
    r, doc = sandbox(ws, "build", recorder, tmp_path / "plain-restored.json")
    assert doc["tasks"]["app:build"]["status"] == "restored" and "inputsNeverRead" not in doc["tasks"]["app:build"]


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_a_failed_run_counts_for_nothing_and_a_new_input_starts_from_nothing(recorder, tmp_path):
    ws = workspace(tmp_path)
    assert recorded(ws, recorder, tmp_path, 1)[0].returncode == 0
    # It fails before reading anything: counted, it would make src/used.txt look unread in a run.
    r, task = recorded(ws, recorder, tmp_path, 2, env={"FAIL": "1"})
    assert r.returncode != 0, r.stdout
    assert "inputsNeverRead" not in task, task
    (ws / "src/new.txt").write_text("n\n")
    r, task = recorded(ws, recorder, tmp_path, 3)
    assert r.returncode == 0, r.stdout + r.stderr
    # src/new.txt is declared (src/**/*) in one run only: not yet a candidate.
    assert task["inputsNeverRead"] == ["src/deep/also-unused.txt", "src/sometimes.txt", "src/unused.txt"], task
    # Once the key holds it no longer (the file is gone), it is forgotten.
    (ws / "src/unused.txt").unlink()
    r, task = recorded(ws, recorder, tmp_path, 4)
    assert task["inputsNeverRead"] == ["src/deep/also-unused.txt", "src/new.txt", "src/sometimes.txt"], task


@pytest.mark.privileged
def test_the_threshold_defaults_to_five_runs(tmp_path):
    ws = workspace(tmp_path, after_runs=None)
    recorder = "ebpf"
    for n in range(1, 5):
        _, task = recorded(ws, recorder, tmp_path, n)
        assert "inputsNeverRead" not in task, (n, task)
    _, task = recorded(ws, recorder, tmp_path, 5)
    assert task["inputsNeverRead"] == ["src/deep/also-unused.txt", "src/sometimes.txt", "src/unused.txt"], task


@pytest.mark.parametrize("value", ["0", "1.5", "\"3\""])
def test_a_bad_threshold_is_a_clear_error(tmp_path, value):
    ws = workspace(tmp_path)
    nx = (ws / "nx.json").read_text().replace('"inputsNeverReadAfterRuns": 2', f'"inputsNeverReadAfterRuns": {value}')
    (ws / "nx.json").write_text(nx)
    r = qk(ws, "run-many", "-t", "build")
    assert r.returncode != 0
    assert "nx.json:" in r.stderr and "qk.inputsNeverReadAfterRuns" in r.stderr and "1 or more" in r.stderr, r.stderr
