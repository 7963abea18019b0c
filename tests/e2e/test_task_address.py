"""Tasks named with colons in their target (test:types, build:docs), as real workspaces name them: qk run
and qk show task read project:target[:configuration] against the workspace, as Nx does."""

from __future__ import annotations

import shutil
from pathlib import Path

import qk_harness as h
from audit_workspace import qk

FIXTURE = h.SOURCE_DIR / "tests/fixtures/workspaces/colon-targets"


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    return ws


def test_qk_run_runs_a_target_whose_name_holds_a_colon(tmp_path):
    ws = workspace(tmp_path)
    r = qk(ws, "run", "@scope/pkg:test:types")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "types" in r.stdout and "@scope/pkg:test:types" in r.stdout
    # The closing line names the target as Nx does, though no -t gave it.
    assert "Successfully ran target test:types for 1 project" in r.stdout, r.stdout


def test_an_ambiguous_task_says_what_it_ran_and_how_to_write_the_other(tmp_path):
    ws = workspace(tmp_path)
    r = qk(ws, "run", "@scope/pkg:build:docs")
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'is read as target "build:docs"' in r.stdout
    assert "write @scope/pkg:build -c docs" in r.stdout
    r = qk(ws, "run", "@scope/pkg:build", "-c", "docs")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "@scope/pkg:build:docs" not in r.stdout


def test_show_task_reads_colon_targets(tmp_path):
    ws = workspace(tmp_path)
    r = qk(ws, "show", "task", "@scope/pkg:test:types")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "@scope/pkg:test:types" in r.stdout


def test_an_unknown_configuration_is_named_with_the_ones_there_are(tmp_path):
    ws = workspace(tmp_path)
    r = qk(ws, "run", "@scope/pkg:test:types:nosuch")
    assert r.returncode != 0
    assert 'target @scope/pkg:test:types has no configuration "nosuch"; its configurations are: ci' in r.stderr
