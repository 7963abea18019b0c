"""examples/sandbox-demo, the monorepo scripts/demo audits: each of its tasks shows the finding it is
there to show, under eBPF and strace alike, and the README's excerpt of the summary is what qk prints."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

import qk_harness as h
import sandbox_report
from audit_workspace import audit_text, qk

RECORDERS = pytest.mark.parametrize("recorder", h.RECORDERS)

EXAMPLE = h.SOURCE_DIR / "examples" / "sandbox-demo"
TARGETS = "build,test,lint,typecheck"

FINDINGS = {
    "app:build": {"readsOutsideInputs": ["scripts/stamp.sh"], "strayWrites": ["packages/app/build.log"],
                  "unkeyedReads": [".env", ".git/HEAD"]},
    "app:lint": {},  # its .lint-cache is scratch, and ignoreReads ^src/** leaves out lib's sources
    "app:test": {"manifestReads": ["packages/lib/package.json"], "toolchainReads": [".nvmrc"],
                 "dependencyReads": {"lib": ["packages/lib/src/index.ts", "packages/lib/src/math.ts"]}},
    "app:typecheck": {"tsconfigReads": ["tsconfig.base.json"]},
    "lib:build": {},
    "lib:lint": {},
    "lib:test": {"toolchainReads": [".nvmrc"]},
    "lib:typecheck": {},  # it reads tsconfig.base.json too, and declares it
}

SUMMARY = """\
Sandbox audit: 4 of 8 tasks went beyond what they declare
  1 workspace package's package.json read by 1 task
  version and package managers' configuration read: .nvmrc (2 tasks)
  app:build
    1 read outside its inputs:
      scripts/stamp.sh
    1 written outside its outputs:
      packages/app/build.log
  app:test
    read in projects it depends on: lib (2 files)
  app:typecheck
    1 TypeScript configuration read outside its inputs, likely an input:
      tsconfig.base.json
  lib:test
    only reads counted above
  read, which the sandbox allows, but not in their keys: .env (1 task), .git/HEAD (1 task)
"""


def demo_workspace(tmp_path: Path) -> Path:
    """A copy of the example as scripts/demo makes it: what the example commits, and a .git/HEAD."""
    ws = Path(os.path.realpath(tmp_path)) / "sandbox-demo"
    shutil.copytree(EXAMPLE, ws, ignore=shutil.ignore_patterns(".qk", ".git", "dist", ".lint-cache", "*.log"))
    (ws / ".git").mkdir()
    (ws / ".git/HEAD").write_text("ref: refs/heads/main\n")
    return ws


def readme_excerpt() -> list[str]:
    """The lines of the summary README.md shows, less the elision."""
    readme = (h.SOURCE_DIR / "README.md").read_text()
    m = re.search(r"```\n(Sandbox audit:.*?)```\n", readme, re.S)
    assert m, "README.md shows no excerpt of the sandbox audit"
    return [line for line in m.group(1).splitlines() if line.strip() != "…"]


@RECORDERS
def test_each_task_of_the_demo_shows_its_finding(recorder, tmp_path):
    ws = demo_workspace(tmp_path)
    report = Path(os.path.realpath(tmp_path)) / "sandbox-report.json"
    r = qk(ws, "run-many", "-t", TARGETS, "--sandbox", "--skip-cache", "--sandbox-report", str(report),
           recorder=recorder)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(report.read_text())
    assert sandbox_report.schema_errors(doc) == [], doc
    assert sandbox_report.order_errors(doc) == [], doc

    assert doc["recorder"] == recorder
    assert {t: v["status"] for t, v in doc["tasks"].items()} == {t: "audited" for t in FINDINGS}
    findings = {t: v["findings"] for t, v in doc["tasks"].items()}
    assert findings == FINDINGS, json.dumps(findings, indent=1)
    assert doc["summary"] == {"tasks": 8, "audited": 8, "wentBeyond": 4, "restored": 0, "notAudited": 0,
                              "unsandboxed": 0, "refused": 0}, doc["summary"]
    assert doc["readByMany"] == []

    text = audit_text(r.stdout)
    assert text.splitlines()[0] == "Sandbox audit: 4 of 8 tasks went beyond what they declare", text
    assert text == SUMMARY, text
    # README.md's excerpt is this summary, line for line and in order.
    lines = text.splitlines()
    positions = [lines.index(line) for line in readme_excerpt()]
    assert positions == sorted(positions), (positions, text)

    # The tasks did their work: app bundled lib's dist, and the scratch directories were kept.
    assert "export function add(a, b) {" in (ws / "packages/app/dist/app.js").read_text()
    assert (ws / "packages/app/dist/stamp.txt").read_text() == "branch=main api=http://localhost:3000\n"
    assert (ws / "packages/lib/.lint-cache/math.ts.txt").exists()

