"""Issue 28, the fix loop on a real monorepo: tests/fixtures/real-tools (pnpm 9 + Nx, real vite, vitest with
coverage, eslint 9; installed from the npm registry once per build dir, real_tools.py) with three things its
nx.json declares taken out, as a workspace that never declared them would be:

- `{workspaceRoot}/tsconfig.base.json` from sharedGlobals: vite (through esbuild) reads it in lib:build,
  lib:test and app:test;
- `{workspaceRoot}/eslint.config.mjs` from targetDefaults.lint's inputs: eslint reads it in every lint task
  (app, lib, and docs, a third package added here so that three tasks of one target need it);
- `{projectRoot}/coverage` from targetDefaults.test's outputs: only lib's vitest writes coverage.

Then the loop: enforce refuses the reads and the tasks fail; the audit finds them; `qk report fix --write`
puts each back where the fixture's author had it (the tsconfig in sharedGlobals, the eslint config in
targetDefaults.lint, since only lint tasks read it) except the coverage output, which one task writes and
so goes into lib's package.json "nx"; the files keep their formatting; `qk report check` says ok; enforce
passes.

Time: the copy under a second, each qk run of the six tasks 2-5 s."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import real_tools
import sandbox_report
from audit_workspace import qk
from real_tools import real_workspace  # noqa: F401 (a fixture)

pytestmark = pytest.mark.privileged

TARGETS = "lint,test"
TASKS = ["app:lint", "app:test", "docs:lint", "lib:build", "lib:lint", "lib:test"]
LINTS = ["app:lint", "docs:lint", "lib:lint"]
TSCONFIG_READERS = ["app:test", "lib:build", "lib:test"]

# The declarations taken out of nx.json (as the fixture writes them) and what stays in their place.
FORGOTTEN = {
    ',\n      "{workspaceRoot}/tsconfig.base.json"\n': "\n",
    '"lint": { "inputs": ["default", "{workspaceRoot}/eslint.config.mjs"], ': '"lint": { "inputs": ["default"], ',
    '      "outputs": ["{projectRoot}/coverage"],\n': "",
}
COVERAGE = '      "outputs": ["{projectRoot}/coverage"],\n'

DOCS_PROJECT = """\
{
  "name": "docs",
  "targets": {
    "lint": {
      "command": "pnpm exec eslint .",
      "options": { "cwd": "{projectRoot}" }
    }
  }
}
"""


def add_docs(ws: Path) -> None:
    """A third package with a lint task as app's: pnpm exec runs the root's eslint in it."""
    (ws / "packages/docs/src").mkdir(parents=True)
    (ws / "packages/docs/package.json").write_text('{\n  "name": "@real-tools/docs",\n  "private": true,\n'
                                                   '  "type": "module"\n}\n')
    (ws / "packages/docs/project.json").write_text(DOCS_PROJECT)
    (ws / "packages/docs/src/index.js").write_text('export const title = "docs";\n')


def forget(ws: Path) -> None:
    path = ws / "nx.json"
    text = path.read_text()
    for declared, left in FORGOTTEN.items():
        assert text.count(declared) == 1, (declared, text)
        text = text.replace(declared, left)
    path.write_text(text)


def run(ws: Path, tmp_path: Path, sandbox: str, name: str):
    """qk run-many of the six tasks; (the process, the sandbox report's path, the report read)."""
    report = Path(os.path.realpath(tmp_path)) / f"{name}.json"
    proc = qk(ws, "run-many", "-t", TARGETS, sandbox, "--skip-cache", "--sandbox-report", str(report),
              env=real_tools.tool_env(), timeout=600)
    assert report.exists(), proc.stdout + proc.stderr
    return proc, report, sandbox_report.checked(json.loads(report.read_text()))


def describe(proc, doc: dict) -> str:
    return (f"exit {proc.returncode}\n{json.dumps(doc['tasks'], indent=1)}\n--- stdout (last 120 lines) ---\n"
            + "\n".join(proc.stdout.splitlines()[-120:]) + f"\n--- stderr ---\n{proc.stderr[-3000:]}")


def test_audit_fix_check_and_enforce_on_real_tools(real_workspace, tmp_path):
    ws = real_workspace
    add_docs(ws)
    declared = (ws / "nx.json").read_text()
    forget(ws)
    lib_manifest = (ws / "packages/lib/package.json").read_text()
    others = ["packages/app/project.json", "packages/app/package.json", "packages/docs/project.json",
              "packages/docs/package.json", "package.json"]
    before = {f: (ws / f).read_text() for f in others}

    # What the configuration leaves out, enforce refuses: the tools fail without their configuration.
    proc, _, doc = run(ws, tmp_path, "--sandbox=enforce", "enforce-before")
    assert proc.returncode != 0, describe(proc, doc)
    refused = {t: v["findings"].get("refusedReads") for t, v in doc["tasks"].items() if v.get("findings")}
    for task in LINTS:
        assert refused.get(task) == ["eslint.config.mjs"], describe(proc, doc)
    assert refused.get("lib:build") == ["tsconfig.base.json"], describe(proc, doc)

    # The audit lets the tasks run and says what they did beyond their declarations.
    proc, report, doc = run(ws, tmp_path, "--sandbox", "audit")
    assert proc.returncode == 0, describe(proc, doc)
    findings = {t: v["findings"] for t, v in doc["tasks"].items()}
    assert sorted(findings) == TASKS, describe(proc, doc)
    for task in LINTS:
        assert findings[task] == {"readsOutsideInputs": ["eslint.config.mjs"]}, describe(proc, doc)
    for task in TSCONFIG_READERS:
        assert findings[task]["tsconfigReads"] == ["tsconfig.base.json"], describe(proc, doc)
    assert "packages/lib/coverage/coverage-summary.json" in findings["lib:test"]["strayWrites"], describe(proc, doc)

    # The edits, printed: nothing written yet.
    r = qk(ws, "report", "fix", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("--- a/nx.json\n+++ b/nx.json\n"), r.stdout
    assert "\n--- a/packages/lib/package.json\n" in r.stdout, r.stdout
    assert '+    "lint": { "inputs": ["default", "{workspaceRoot}/eslint.config.mjs"], "cache": true },' in r.stdout
    assert r.stdout.count("\n@@ -") == 3, r.stdout  # sharedGlobals and lint far apart in nx.json: two hunks
    assert r.stderr == "", r.stderr
    git = subprocess.run(["git", "apply", "--check", "-"], input=r.stdout, cwd=ws, capture_output=True, text=True)
    assert git.returncode == 0, git.stderr
    assert (ws / "packages/lib/package.json").read_text() == lib_manifest

    r = qk(ws, "report", "fix", str(report), "--write")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "qk report fix: wrote nx.json\nqk report fix: wrote packages/lib/package.json\n", r.stdout
    # nx.json is the fixture's own again, but for the coverage output: one task writes it, so it goes
    # into lib's package.json, beside the scripts. Every other line is as it was.
    assert (ws / "nx.json").read_text() == declared.replace(COVERAGE, "")
    assert (ws / "packages/lib/package.json").read_text() == lib_manifest.replace('  "nx": {\n', """\
  "nx": {
    "targets": {
      "test": {
        "outputs": ["{projectRoot}/coverage"]
      }
    },
""")
    assert {f: (ws / f).read_text() for f in others} == before

    r = qk(ws, "report", "check", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    assert all(f"  {t}: ok\n" in r.stdout for t in TASKS), r.stdout
    r = qk(ws, "report", "fix", str(report))
    assert r.stdout == "" and "nothing to write" in r.stderr, r.stdout + r.stderr

    # What the audit now passes, enforce passes.
    proc, _, doc = run(ws, tmp_path, "--sandbox=enforce", "enforce-after")
    assert proc.returncode == 0, describe(proc, doc)
    assert {t: v["status"] for t, v in doc["tasks"].items()} == {t: "enforced" for t in TASKS}, describe(proc, doc)
    assert {t: v.get("findings") for t, v in doc["tasks"].items() if v.get("findings")} == {}, describe(proc, doc)
    assert "Sandbox enforce: 6 tasks kept to what they declare\n" in proc.stdout, describe(proc, doc)
    summary = json.loads((ws / "packages/lib/coverage/coverage-summary.json").read_text())
    assert summary["total"]["lines"]["total"] > 0, summary
    assert re.search(r"^lib:test +\| +Tests +5 passed \(5\)", proc.stdout, re.M), proc.stdout
