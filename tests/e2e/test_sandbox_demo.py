"""examples/sandbox-demo, the monorepo scripts/demo audits, installed with pnpm from the npm registry at
its lockfile's versions: its tasks run the real tsc, eslint and node --test, and each finding the audit
shows is what one of them did, under eBPF and strace alike. The README's excerpt of the summary is what qk
prints, and enforce refuses what the audit reported, failing the tools with their own errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import pnpm_install
import qk_harness as h
import sandbox_report
from audit_workspace import audit_text, qk

RECORDERS = pytest.mark.parametrize("recorder", h.RECORDERS)

EXAMPLE = h.SOURCE_DIR / "examples" / "sandbox-demo"
TARGETS = "build,test,lint,typecheck"

FINDINGS = {
    # tsc lists what it emitted in build.log; node runs the stamp script, which reads .git/HEAD and .env
    "app:build": {"readsOutsideInputs": ["scripts/stamp.mjs"], "strayWrites": ["packages/app/build.log"],
                  "unkeyedReads": [".env", ".git/HEAD"]},
    "app:lint": {},  # eslint's cache is scratch; eslint.config.mjs is among the lint inputs
    # the test imports lib through pnpm's link: node reads lib's package.json and its sources
    "app:test": {"manifestReads": ["packages/lib/package.json"],
                 "dependencyReads": {"lib": ["packages/lib/src/index.js", "packages/lib/src/math.js"]}},
    "app:typecheck": {"tsconfigReads": ["tsconfig.base.json"]},  # through its tsconfig's extends
    "lib:build": {},
    "lib:lint": {},
    "lib:test": {},
    "lib:typecheck": {},  # it reads tsconfig.base.json too, and declares it
}

SUMMARY = """\
Sandbox audit: 3 of 8 tasks went beyond what they declare
  1 workspace package's package.json read by 1 task: app:test
  app:build
    1 read outside its inputs:
      scripts/stamp.mjs
    1 written outside its outputs:
      packages/app/build.log
    what to declare in its target:
      "inputs": ["{workspaceRoot}/scripts/stamp.mjs"], or in qk:ultracache.ignoreReads if it cannot change the result
      "outputs": ["{projectRoot}/build.log"]
  app:test
    read in projects it depends on: lib (2 files)
    what to declare in its target:
      "inputs": ["^default"], or ["^src/**"] in qk:ultracache.ignoreReads if they cannot change the result
  app:typecheck
    1 TypeScript configuration read outside its inputs, likely an input:
      tsconfig.base.json
    what to declare in its target:
      "inputs": ["{workspaceRoot}/tsconfig.base.json"], or in qk:ultracache.ignoreReads if it cannot change the result
  read, which the sandbox allows, but not in their keys: .env (1 task: app:build), .git/HEAD (1 task: app:build)
"""

GENERATED = shutil.ignore_patterns(".qk", ".git", "node_modules", "dist", ".eslintcache", "*.log")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The example as scripts/demo makes it: what it commits, installed with pnpm (frozen lockfile), in a
    git repository on branch main. Installed once; each test copies it."""
    ws = Path(os.path.realpath(tmp_path_factory.mktemp("demo"))) / "sandbox-demo"
    shutil.copytree(EXAMPLE, ws, ignore=GENERATED)
    pnpm_install.install(ws, 9, frozen=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
    return ws


def demo_workspace(installed: Path, tmp_path: Path) -> Path:
    ws = Path(os.path.realpath(tmp_path)) / "sandbox-demo"
    shutil.copytree(installed, ws, symlinks=True)
    return ws


def readme_excerpt() -> list[str]:
    """The lines of the summary README.md shows, less the elisions."""
    readme = (h.SOURCE_DIR / "README.md").read_text()
    m = re.search(r"```\n(Sandbox audit:.*?)```\n", readme, re.S)
    assert m, "README.md shows no excerpt of the sandbox audit"
    return [line for line in m.group(1).splitlines() if line.strip() != "…"]


@RECORDERS
def test_each_task_of_the_demo_shows_what_its_tool_did(recorder, installed, tmp_path):
    ws = demo_workspace(installed, tmp_path)
    report = Path(os.path.realpath(tmp_path)) / "sandbox-report.json"
    r = qk(ws, "run-many", "-t", TARGETS, "--sandbox", "--skip-cache", "--sandbox-report", str(report),
           recorder=recorder, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(report.read_text())
    assert sandbox_report.schema_errors(doc) == [], doc
    assert sandbox_report.order_errors(doc) == [], doc

    assert doc["recorder"] == recorder
    assert {t: v["status"] for t, v in doc["tasks"].items()} == {t: "audited" for t in FINDINGS}
    findings = {t: v["findings"] for t, v in doc["tasks"].items()}
    assert findings == FINDINGS, json.dumps(findings, indent=1)
    assert doc["summary"] == {"tasks": 8, "audited": 8, "wentBeyond": 3, "restored": 0, "notAudited": 0,
                              "unsandboxed": 0, "refused": 0}, doc["summary"]
    assert doc["readByMany"] == []

    text = audit_text(r.stdout)
    assert text == SUMMARY, text
    # README.md's excerpt is this summary, line for line and in order.
    lines = text.splitlines()
    positions = [lines.index(line) for line in readme_excerpt()]
    assert positions == sorted(positions), (positions, text)

    # The tools did their work: tsc emitted declarations and JavaScript, node ran the tests and the stamp
    # script, eslint kept its cache in the scratch directory.
    assert "export function mean(values: number[]): number;" in (ws / "packages/lib/dist/math.d.ts").read_text()
    assert "mean(millis)" in (ws / "packages/app/dist/main.js").read_text()
    assert "dist/main.js" in (ws / "packages/app/build.log").read_text()
    assert json.loads((ws / "packages/app/dist/stamp.json").read_text()) == {
        "branch": "main", "api": "http://localhost:3000"}
    assert re.search(r"^lib:test +\| ✔ mean", r.stdout, re.M), r.stdout
    assert re.search(r"^app:test +\| ✔ report", r.stdout, re.M), r.stdout
    assert any((ws / "packages/lib/.eslintcache").iterdir())


@pytest.mark.privileged
def test_enforce_refuses_what_the_audit_reported_and_the_tools_say_so(installed, tmp_path):
    ws = demo_workspace(installed, tmp_path)
    r = qk(ws, "run-many", "-t", TARGETS, "--sandbox=enforce", timeout=300)
    assert r.returncode != 0, r.stdout + r.stderr
    # Each tool fails with its own error on the read the audit reported.
    # What a task may not read is in its view, unreadable: node is refused the script.
    assert re.search(r"^app:build +\| Error: EACCES: permission denied, open '.*/scripts/stamp.mjs'", r.stdout,
                     re.M), r.stdout
    assert re.search(r"^app:typecheck +\| error TS5083: Cannot read file '.*/tsconfig.base.json'", r.stdout,
                     re.M), r.stdout
    enforce = r.stdout[r.stdout.index("Sandbox enforce:"):]
    assert enforce.startswith("Sandbox enforce: 3 of 8 tasks did what their declarations refuse\n"), enforce
    for task, path in (("app:build", "scripts/stamp.mjs"), ("app:test", "packages/lib/package.json"),
                       ("app:typecheck", "tsconfig.base.json")):
        assert f"  {task} (failed)\n    1 read refused; declare it as an input:\n      {path}\n" in enforce

    # Declared as the audit suggests, app:build runs; the log tsc wrote beside its outputs is not kept.
    project = ws / "packages/app/project.json"
    config = json.loads(project.read_text())
    config["targets"]["build"]["inputs"] = ["production", "^production", "{workspaceRoot}/tsconfig.base.json",
                                            "{workspaceRoot}/scripts/stamp.mjs"]
    project.write_text(json.dumps(config))
    r = qk(ws, "run", "app:build", "--sandbox=enforce", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "    1 written outside its outputs, not kept:\n      packages/app/build.log\n" in r.stdout
    assert not (ws / "packages/app/build.log").exists()
    assert json.loads((ws / "packages/app/dist/stamp.json").read_text())["branch"] == "main"
