"""nx.json's run options, as Nx reads them: `parallel` (top level, else tasksRunnerOptions.default.options)
sets how many tasks run at once, NX_PARALLEL overrides it and --parallel overrides both; `skipNxCache`
and NX_SKIP_NX_CACHE=true restore nothing; a malformed value is an error naming where it is."""

from __future__ import annotations

import json

from audit_workspace import NX_JSON, make_workspace, qk


def rendezvous_workspace(tmp_path, nx: dict):
    """Three tasks, each of which finishes only once all three have started (or fails after 30 s): they
    pass only when three run at once, more than this two-core machine's default."""
    meet = tmp_path / "meet"
    meet.mkdir()
    wait_all = (f"touch {meet}/$0; i=0; while [ $(ls {meet} | wc -l) -lt 3 ]; do i=$((i+1)); "
                f"[ $i -gt 600 ] && exit 1; sleep 0.05; done")
    projects = {f"p{n}": {"root": f"packages/p{n}", "targets": {"meet": {
        "command": f"sh -c '{wait_all}' p{n}", "cache": False}}} for n in range(3)}
    return make_workspace(tmp_path / "ws", projects, nx={**NX_JSON, **nx})


def test_nx_json_parallel_runs_that_many_tasks_at_once(tmp_path):
    ws = rendezvous_workspace(tmp_path, {"parallel": 3})
    r = qk(ws, "run-many", "-t", "meet")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_legacy_tasks_runner_options_parallel_is_read_too(tmp_path):
    ws = rendezvous_workspace(tmp_path, {"tasksRunnerOptions": {"default": {"options": {"parallel": 3}}}})
    r = qk(ws, "run-many", "-t", "meet")
    assert r.returncode == 0, r.stdout + r.stderr


def concurrency_workspace(tmp_path, nx: dict):
    """Four tasks that note how many of them run at each one's start."""
    log = tmp_path / "running"
    log.mkdir()
    note = f"mkdir {log}/$0 && ls {log} | wc -l >> {tmp_path}/seen && sleep 0.2 && rmdir {log}/$0"
    projects = {f"p{n}": {"root": f"packages/p{n}", "targets": {"note": {
        "command": f"sh -c '{note}' p{n}", "cache": False}}} for n in range(4)}
    return make_workspace(tmp_path / "ws", projects, nx={**NX_JSON, **nx}), tmp_path / "seen"


def test_parallel_flag_and_nx_parallel_win_over_nx_json(tmp_path):
    ws, seen = concurrency_workspace(tmp_path, {"parallel": 4})
    r = qk(ws, "run-many", "-t", "note", "--parallel", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert max(int(x) for x in seen.read_text().split()) == 1
    seen.unlink()
    r = qk(ws, "run-many", "-t", "note", env={"NX_PARALLEL": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert max(int(x) for x in seen.read_text().split()) == 1


def test_skip_nx_cache_in_nx_json_and_the_environment(tmp_path):
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "app", "targets": {"build": {
        "command": "echo ran", "cache": True}}}}, nx={**NX_JSON, "skipNxCache": True})
    for _ in range(2):
        r = qk(ws, "run-many", "-t", "build")
        assert r.returncode == 0 and "restored from the cache" not in r.stdout, r.stdout
    ws2 = make_workspace(tmp_path / "ws2", {"app": {"root": "app", "targets": {"build": {
        "command": "echo ran", "cache": True}}}})
    assert qk(ws2, "run-many", "-t", "build").returncode == 0
    r = qk(ws2, "run-many", "-t", "build", env={"NX_SKIP_NX_CACHE": "true"})
    assert "restored from the cache" not in r.stdout, r.stdout
    r = qk(ws2, "run-many", "-t", "build")
    assert "restored from the cache" in r.stdout, r.stdout


def test_malformed_run_options_are_named(tmp_path):
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "app", "targets": {"build": {"command": "true"}}}},
                        nx={**NX_JSON, "parallel": "many"})
    r = qk(ws, "run-many", "-t", "build")
    assert r.returncode != 0
    assert "nx.json" in r.stderr and "parallel" in r.stderr and "a whole number of tasks" in r.stderr, r.stderr
    ws2 = make_workspace(tmp_path / "ws2", {"app": {"root": "app", "targets": {"build": {"command": "true"}}}})
    r = qk(ws2, "run-many", "-t", "build", env={"NX_PARALLEL": "lots"})
    assert r.returncode != 0
    assert "NX_PARALLEL='lots' is not a number of tasks" in r.stderr, r.stderr
