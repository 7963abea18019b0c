"""qk report check: a stored --sandbox-report re-judged against today's declarations without running
anything: what the declarations cover now, what they still leave out, tasks gone from the workspace, and
a file that is no report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit_workspace import make_workspace, qk

pytestmark = pytest.mark.privileged  # the report comes from a real audited run

BUILD = {
    "command": "mkdir -p packages/app/dist && cat notes.txt > packages/app/dist/out.txt && echo log > packages/app/build.log",
    "outputs": ["{projectRoot}/dist"],
}


def audited(tmp_path: Path) -> tuple[Path, Path]:
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {"build": dict(BUILD)}}},
                        {"notes.txt": "notes\n", "packages/app/src/a.txt": "a\n", ".gitignore": "dist/\n"})
    report = tmp_path / "report.json"
    r = qk(ws, "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    found = json.loads(report.read_text())["tasks"]["app:build"]["findings"]
    assert found["readsOutsideInputs"] == ["notes.txt"] and found["strayWrites"] == ["packages/app/build.log"]
    return ws, report


def declare(ws: Path, **target):
    path = ws / "packages/app/project.json"
    doc = json.loads(path.read_text())
    doc["targets"]["build"].update(target)
    path.write_text(json.dumps(doc, indent=2))


def check(ws: Path, report: Path, *more: str):
    return qk(ws, "report", "check", str(report), *more)


def test_findings_stay_unexpected_until_declared_then_ok(tmp_path):
    ws, report = audited(tmp_path)
    r = check(ws, report)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith("qk report check: 1 of 1 tasks with findings in")
    assert "  app:build\n    still unexpected:\n      readsOutsideInputs: notes.txt\n" in r.stdout
    assert "      strayWrites: packages/app/build.log\n" in r.stdout

    declare(ws, inputs=["default", "{workspaceRoot}/notes.txt"])  # the read only: the write remains
    r = check(ws, report, "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    assert doc["tasks"]["app:build"]["stillUnexpected"] == {"strayWrites": ["packages/app/build.log"]}
    assert doc["tasks"]["app:build"]["nowCovered"] == {"readsOutsideInputs": ["notes.txt"]}

    declare(ws, outputs=["{projectRoot}/dist", "{projectRoot}/build.log"])
    r = check(ws, report)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("qk report check: every task of")
    assert "  app:build: ok\n" in r.stdout
    doc = json.loads(check(ws, report, "--json").stdout)
    assert doc == {"ok": True, "tasks": {"app:build": {
        "ok": True, "stillUnexpected": {},
        "nowCovered": {"readsOutsideInputs": ["notes.txt"], "strayWrites": ["packages/app/build.log"]}}}}


def test_a_task_gone_from_the_workspace_is_said_and_not_ok(tmp_path):
    ws, report = audited(tmp_path)
    path = ws / "packages/app/project.json"
    doc = json.loads(path.read_text())
    doc["targets"]["compile"] = doc["targets"].pop("build")
    path.write_text(json.dumps(doc))
    r = check(ws, report)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "  app:build: not re-judged: project app has no target build today\n" in r.stdout


def test_a_file_that_is_no_sandbox_report_is_a_clear_error(tmp_path):
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {"build": dict(BUILD)}}})
    bad = tmp_path / "bad.json"
    bad.write_text('{"schemaVersion": 1, "tasks": [}')
    r = check(ws, bad)
    assert r.returncode not in (0, 1), r.stdout + r.stderr
    assert "bad.json" in r.stderr and "malformed JSON" in r.stderr, r.stderr
    r = qk(ws, "report", "check", str(tmp_path / "missing.json"))
    assert r.returncode != 0 and "missing.json" in r.stderr
