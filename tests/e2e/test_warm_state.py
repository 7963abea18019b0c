"""Warm state ("qk:warm"): a tool's cache in the project that nothing declares, kept with the task's cache
entry and put back where the workspace holds none. A node lint script that keeps a cache of its results by
file content (as eslint --cache does) says how many files it checked and how many it took from its cache:
a run stores its warm state with the entry; a fresh copy of the workspace (warm path gone, a source
edited, so a miss) starts warm; a hit restores it with the outputs; the workspace's own warm state is kept
as the newer; a warm path that is a symbolic link is never followed. Plain, and under --sandbox=enforce
(over an overlay, and Landlock alone)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from audit_workspace import make_workspace, qk
from enforce_workspace import mode_env

# Enforce needs root (namespaces, Landlock): its runs are marked privileged, a plain run is not.
MODES = pytest.mark.parametrize("mode", ["plain", pytest.param("overlay", marks=pytest.mark.privileged),
                                         pytest.param("landlock", marks=pytest.mark.privileged)])

# Keeps .lintcache/cache.json: file -> content it found clean. A file whose content is there is not
# checked again; one edited is. The report is its output.
LINT = r"""
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
const cacheFile = ".lintcache/cache.json";
const cache = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, "utf8")) : {};
let checked = 0, cached = 0;
const report = [];
for (const name of readdirSync("src").sort()) {
  const text = readFileSync("src/" + name, "utf8");
  const hash = createHash("sha256").update(text).digest("hex");
  if (cache[name] === hash) { cached++; } else { checked++; cache[name] = hash; }
  report.push(name + ": ok");
}
mkdirSync(".lintcache", { recursive: true });
writeFileSync(cacheFile, JSON.stringify(cache));
mkdirSync("dist", { recursive: true });
writeFileSync("dist/report.txt", report.join("\n") + "\n");
console.log(`checked ${checked}, from cache ${cached}`);
"""

LINT_TARGET = {
    "command": "node ../../tools/lint.mjs",
    "options": {"cwd": "{projectRoot}"},
    "inputs": ["{projectRoot}/src/**/*", "{workspaceRoot}/tools/lint.mjs"],
    "outputs": ["{projectRoot}/dist"],
    "cache": True,
    "qk:warm": ["{projectRoot}/.lintcache"],
}


def workspace(root: Path) -> Path:
    return make_workspace(root, {"app": {"root": "packages/app", "targets": {"lint": LINT_TARGET}}}, {
        "tools/lint.mjs": LINT,
        "packages/app/src/a.js": "export const a = 1;\n",
        "packages/app/src/b.js": "export const b = 2;\n",
        ".gitignore": "dist\n.lintcache\n",
    })


def lint(ws: Path, mode: str, *more: str):
    args = ["run-many", "-t", "lint", *more]
    if mode != "plain":
        args.append("--sandbox=enforce")
    r = qk(ws, *args, env=mode_env(mode) if mode != "plain" else None)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def landlock_alone_dirs(ws: Path, mode: str, warm: bool) -> None:
    """Held by Landlock alone, the sandbox cannot let a task make a missing warm path (see
    test_landlock_alone_lets_a_task_make_its_missing_warm_path), and a result for which qk made the
    missing output directory is not cached: there the directories stand empty beforehand, as in a checkout
    that holds them."""
    if mode == "landlock":
        (ws / "packages/app/dist").mkdir(exist_ok=True)
        if warm:
            (ws / "packages/app/.lintcache").mkdir(exist_ok=True)


def first_lint(ws: Path, mode: str):
    """The first run, with no warm state anywhere."""
    landlock_alone_dirs(ws, mode, warm=True)
    return lint(ws, mode)


def tool_said(r) -> str:
    m = re.search(r"checked \d+, from cache \d+", r.stdout)
    return m.group(0) if m else ""


def cache_json(ws: Path) -> dict:
    return json.loads((ws / "packages/app/.lintcache/cache.json").read_text())


def entries_with_warm_state(ws: Path) -> list[Path]:
    return [p for p in (ws / ".qk/cache").iterdir() if (p / "warm.json").is_file()]


@MODES
def test_a_run_stores_its_warm_state_and_a_fresh_copy_starts_warm(tmp_path, mode):
    ws = workspace(tmp_path / "ws")
    first = first_lint(ws, mode)
    assert tool_said(first) == "checked 2, from cache 0", first.stdout
    [entry] = entries_with_warm_state(ws)
    kept = entry / "warm/packages/app/.lintcache/cache.json"
    assert json.loads(kept.read_text()) == cache_json(ws)
    # Warm state is no output: the entry's outputs are the report alone.
    meta = json.loads((entry / "meta.json").read_text())
    assert [f["path"] for f in meta["files"]] == ["packages/app/dist/report.txt"], meta

    # CI: a fresh checkout with the cache brought along, and one source edited, so the task must run.
    fresh = tmp_path / "fresh"
    shutil.copytree(ws, fresh, symlinks=True)
    shutil.rmtree(fresh / "packages/app/.lintcache")
    shutil.rmtree(fresh / "packages/app/dist")
    (fresh / "packages/app/src/b.js").write_text("export const b = 3;\n")
    landlock_alone_dirs(fresh, mode, warm=False)  # the warm path is put in place by qk
    second = lint(fresh, mode)
    assert "warm state put in place before it runs: packages/app/.lintcache" in second.stdout, second.stdout
    # The tool found its cache: only the edited file was checked again.
    assert tool_said(second) == "checked 1, from cache 1", second.stdout
    assert set(cache_json(fresh)) == {"a.js", "b.js"}
    # The new result keeps the new warm state, and is the task's newest.
    assert len(entries_with_warm_state(fresh)) == 2


@MODES
def test_a_hit_restores_the_warm_state_with_the_outputs_and_keeps_the_workspaces(tmp_path, mode):
    ws = workspace(tmp_path / "ws")
    first_lint(ws, mode)
    stored = cache_json(ws)
    shutil.rmtree(ws / "packages/app/.lintcache")
    shutil.rmtree(ws / "packages/app/dist")

    hit = lint(ws, mode)
    assert "restored from the cache" in hit.stdout and tool_said(hit) == "", hit.stdout
    assert (ws / "packages/app/dist/report.txt").read_text() == "a.js: ok\nb.js: ok\n"
    assert cache_json(ws) == stored
    # A restore is quiet about it: a fully cached run stays one line a task.
    assert "warm state" not in hit.stdout, hit.stdout

    # Warm state in the workspace is newer than any entry's: a hit leaves it as it is.
    (ws / "packages/app/.lintcache/cache.json").write_text('{"newer": "1"}')
    shutil.rmtree(ws / "packages/app/dist")
    again = lint(ws, mode)
    assert "restored from the cache" in again.stdout, again.stdout
    assert (ws / "packages/app/dist/report.txt").is_file()
    assert cache_json(ws) == {"newer": "1"}


@MODES
def test_a_warm_path_that_is_a_link_is_never_followed(tmp_path, mode):
    ws = workspace(tmp_path / "ws")
    first_lint(ws, mode)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(ws / "packages/app/.lintcache")
    os.symlink(outside, ws / "packages/app/.lintcache")

    # A hit: the outputs come back, nothing is written where the link leads.
    shutil.rmtree(ws / "packages/app/dist")
    hit = lint(ws, mode)
    assert "restored from the cache" in hit.stdout, hit.stdout
    assert "symbolic link" in hit.stdout, hit.stdout
    assert list(outside.iterdir()) == []
    assert (ws / "packages/app/.lintcache").is_symlink()

    # A miss: qk puts nothing through the link before the task runs, so the tool starts cold.
    (ws / "packages/app/src/a.js").write_text("export const a = 5;\n")
    miss = lint(ws, "plain")
    assert "symbolic link" in miss.stdout and "warm state put in place" not in miss.stdout, miss.stdout
    assert tool_said(miss) == "checked 2, from cache 0", miss.stdout


def test_skip_cache_restores_no_warm_state(tmp_path):
    ws = workspace(tmp_path / "ws")
    lint(ws, "plain")
    shutil.rmtree(ws / "packages/app/.lintcache")
    r = lint(ws, "plain", "--skip-cache")
    assert tool_said(r) == "checked 2, from cache 0", r.stdout
    assert "warm state" not in r.stdout, r.stdout


def test_a_task_without_warm_paths_keeps_none(tmp_path):
    target = dict(LINT_TARGET)
    del target["qk:warm"]
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {"lint": target}}}, {
        "tools/lint.mjs": LINT, "packages/app/src/a.js": "1\n", ".gitignore": "dist\n.lintcache\n"})
    lint(ws, "plain")
    assert entries_with_warm_state(ws) == []
    assert not (ws / ".qk/cache/warm").exists()
    shutil.rmtree(ws / "packages/app/.lintcache")
    (ws / "packages/app/src/a.js").write_text("2\n")
    r = lint(ws, "plain")
    assert tool_said(r) == "checked 1, from cache 0", r.stdout


@pytest.mark.privileged
def test_landlock_alone_lets_a_task_make_its_missing_warm_path(tmp_path):
    # The spec lets a task write its warm paths; held by Landlock alone, which allows only what exists,
    # a missing one is made as the task starts (and removed if left empty), as an output directory is.
    ws = workspace(tmp_path / "ws")
    lint(ws, "landlock")
