"""qk report check: a stored --sandbox-report re-judged against today's declarations without running
anything: what the declarations cover now, what they still leave out, tasks gone from the workspace, and
a file that is no report."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import qk_harness as h
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


def settled(ws: Path, report: Path, *tasks: str) -> None:
    """After report fix --write: check says ok for each task, and a second fix has nothing to write."""
    r = check(ws, report)
    assert r.returncode == 0 and all(f"  {t}: ok\n" in r.stdout for t in tasks), r.stdout + r.stderr
    r = qk(ws, "report", "fix", str(report))
    assert r.stdout == "" and "nothing to write" in r.stderr, r.stdout + r.stderr


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


def test_fix_prints_the_edits_writes_them_and_then_check_is_ok_and_enforce_passes(tmp_path):
    ws, report = audited(tmp_path)
    before = (ws / "packages/app/project.json").read_text()
    r = qk(ws, "report", "fix", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    diff = r.stdout
    assert diff.startswith("--- a/packages/app/project.json\n+++ b/packages/app/project.json\n@@ "), diff
    assert '+      "inputs": ["default", "^default", "{workspaceRoot}/notes.txt"],' in diff, diff
    assert '+        "{projectRoot}/build.log"' in diff, diff
    assert (ws / "packages/app/project.json").read_text() == before  # printed, not written
    # The diff is one git applies as it is.
    applied = tmp_path / "applied"
    applied.mkdir()
    (applied / "packages/app").mkdir(parents=True)
    (applied / "packages/app/project.json").write_text(before)
    git = subprocess.run(["git", "apply", "--unsafe-paths", "--directory=.", "-"], input=diff, cwd=applied,
                         capture_output=True, text=True)
    assert git.returncode == 0, git.stderr

    # A project.json that is a link is not replaced by a file of its own: said, left as it is.
    project = ws / "packages/app/project.json"
    real = ws / "packages/app/project.real.json"
    project.rename(real)
    project.symlink_to("project.real.json")
    r = qk(ws, "report", "fix", str(report), "--write")
    assert "packages/app/project.json: not a regular file (a link?); nothing written" in r.stderr, r.stderr
    assert project.is_symlink() and real.read_text() == before
    project.unlink()
    real.rename(project)

    project.chmod(0o600)  # its mode is kept
    r = qk(ws, "report", "fix", str(report), "--write")
    assert r.returncode == 0 and "qk report fix: wrote packages/app/project.json" in r.stdout, r.stdout + r.stderr
    assert project.stat().st_mode & 0o777 == 0o600
    written = (ws / "packages/app/project.json").read_text()
    assert written == (applied / "packages/app/project.json").read_text()
    doc = json.loads(written)["targets"]["build"]
    assert doc["inputs"] == ["default", "^default", "{workspaceRoot}/notes.txt"]
    assert doc["outputs"] == ["{projectRoot}/dist", "{projectRoot}/build.log"]
    settled(ws, report, "app:build")  # written once: a second fix finds nothing left to write

    # What the audit now passes, enforce passes: the read is in the task's view, the write is kept.
    r = qk(ws, "run-many", "-t", "build", "--sandbox=enforce", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "packages/app/build.log").read_text() == "log\n"


def test_fix_writes_a_script_targets_declarations_into_its_package_json(tmp_path):
    # A pnpm package whose target is its package.json script: the declarations go beside it, in "nx".
    ws = tmp_path / "ws"
    (ws / "packages/app").mkdir(parents=True)
    (ws / "nx.json").write_text('{\n  "namedInputs": {"default": ["{projectRoot}/**/*"]}\n}\n')
    (ws / "pnpm-workspace.yaml").write_text("packages:\n  - 'packages/*'\n")
    (ws / "package.json").write_text('{"name": "root", "private": true}\n')
    (ws / "notes.txt").write_text("notes\n")
    manifest = '{\n  "name": "app",\n  // scripts run from the package\n  "scripts": {\n    "build": "cat ../../notes.txt > out.txt"\n  }\n}\n'
    (ws / "packages/app/package.json").write_text(manifest.replace("  // scripts run from the package\n", ""))
    report = tmp_path / "report.json"
    r = qk(ws, "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    found = json.loads(report.read_text())["tasks"]["app:build"]["findings"]
    assert found == {"readsOutsideInputs": ["notes.txt"], "strayWrites": ["packages/app/out.txt"]}, found

    r = qk(ws, "report", "fix", str(report), "--write")
    assert r.returncode == 0 and "wrote packages/app/package.json" in r.stdout, r.stdout + r.stderr
    doc = json.loads((ws / "packages/app/package.json").read_text())
    assert doc["scripts"] == {"build": "cat ../../notes.txt > out.txt"}  # left as it was
    assert doc["nx"] == {"targets": {"build": {
        "inputs": ["default", "^default", "{workspaceRoot}/notes.txt"], "outputs": ["{projectRoot}/out.txt"]}}}
    assert list(doc) == ["name", "scripts", "nx"], doc  # added last, as a person adds it (issue 39)
    r = check(ws, report)
    assert r.returncode == 0, r.stdout + r.stderr


def test_fix_puts_a_file_many_tasks_need_once_into_shared_globals(tmp_path):
    def reader(name: str, **more) -> dict:
        return {"root": f"packages/{name}", "targets": {"build": {
            "command": f"mkdir -p packages/{name}/dist && cat shared.txt > packages/{name}/dist/out.txt",
            "outputs": ["{projectRoot}/dist"], **more}}}

    nx = {"namedInputs": {"default": ["{projectRoot}/**/*", "sharedGlobals"], "sharedGlobals": []}}
    projects = {n: reader(n) for n in ("a", "b", "c")}
    projects["d"] = reader("d", inputs=["{projectRoot}/**/*"])  # its inputs do not take sharedGlobals
    ws = make_workspace(tmp_path / "ws", projects, {"shared.txt": "shared\n", ".gitignore": "dist/\n"}, nx=nx)
    report = tmp_path / "report.json"
    r = qk(ws, "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    tasks = json.loads(report.read_text())["tasks"]
    assert all(tasks[f"{n}:build"]["findings"] == {"readsOutsideInputs": ["shared.txt"]} for n in "abcd"), tasks

    untouched = {n: (ws / f"packages/{n}/project.json").read_text() for n in "abc"}
    r = qk(ws, "report", "fix", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--- a/nx.json\n" in r.stdout and '+    "sharedGlobals": ["{workspaceRoot}/shared.txt"]' in r.stdout, r.stdout
    assert "--- a/packages/d/project.json\n" in r.stdout, r.stdout
    assert "packages/a/project.json" not in r.stdout, r.stdout

    r = qk(ws, "report", "fix", str(report), "--write")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads((ws / "nx.json").read_text())["namedInputs"]["sharedGlobals"] == ["{workspaceRoot}/shared.txt"]
    assert {n: (ws / f"packages/{n}/project.json").read_text() for n in "abc"} == untouched
    assert json.loads((ws / "packages/d/project.json").read_text())["targets"]["build"]["inputs"] == [
        "{projectRoot}/**/*", "{workspaceRoot}/shared.txt"]
    # a, b and c take the file through sharedGlobals now: nothing is left for each of them.
    settled(ws, report)


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_the_report_names_the_process_behind_each_finding(recorder, tmp_path):
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {"build": dict(BUILD)}}},
                        {"notes.txt": "notes\n", ".gitignore": "dist/\n"})
    report = tmp_path / "report.json"
    r = qk(ws, "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report), recorder=recorder)
    assert r.returncode == 0, r.stdout + r.stderr
    procs = json.loads(report.read_text())["tasks"]["app:build"]["processes"]
    shell = "/bin/sh -c " + BUILD["command"]
    # cat read notes.txt, started by the task's command; the shell itself wrote build.log (echo).
    assert procs["notes.txt"] == ["cat notes.txt", shell], procs
    assert procs["packages/app/build.log"] == [shell], procs
    # --verbose says the same under each task of the summary; report check -v under each access left.
    r = qk(ws, "run-many", "-t", "build", "--sandbox", "--skip-nx-cache", "-v", recorder=recorder)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"    by process:\n      notes.txt\n        by cat notes.txt <- {shell}\n" in r.stdout, r.stdout
    assert f"      packages/app/build.log\n        by {shell}\n" in r.stdout, r.stdout
    quiet = qk(ws, "run-many", "-t", "build", "--sandbox", "--skip-nx-cache", recorder=recorder)
    assert "by process:" not in quiet.stdout, quiet.stdout
    c = check(ws, report, "-v")
    assert c.returncode == 1
    assert f"      readsOutsideInputs: notes.txt\n        by cat notes.txt <- {shell}\n" in c.stdout, c.stdout
    assert "by cat" not in check(ws, report).stdout


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_an_enforce_refusal_names_the_process_refused(recorder, tmp_path):
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {"build": dict(BUILD)}}},
                        {"notes.txt": "notes\n", ".gitignore": "dist/\n"})
    report = tmp_path / "report.json"
    r = qk(ws, "run-many", "-t", "build", "--sandbox=enforce", "--sandbox-report", str(report), "-v",
           recorder=recorder)
    assert r.returncode != 0, r.stdout + r.stderr  # cat is refused notes.txt
    task = json.loads(report.read_text())["tasks"]["app:build"]
    assert task["findings"]["refusedReads"] == ["notes.txt"], task
    shell = "/bin/sh -c " + BUILD["command"]
    # The chain ends at the task's command: qk-sandbox-exec, which qk runs it through, is left out. Under
    # strace too, though the task runs in a PID namespace of its own (--pidns-translation).
    assert task["processes"]["notes.txt"] == ["cat notes.txt", shell], task
    assert f"      notes.txt\n        by cat notes.txt <- {shell}\n" in r.stdout, r.stdout


def test_fix_writes_what_three_tasks_of_one_target_need_once_into_target_defaults(tmp_path):
    # Each build reads a setup file of its project that its inputs leave out and writes a log outside its
    # outputs; a, b and c take both keys from targetDefaults.build, d names its own.
    def builder(name: str, **more) -> dict:
        return {"root": f"packages/{name}", "targets": {"build": {
            "command": f"cat packages/{name}/setup.cfg > /dev/null && echo log > packages/{name}/build.log", **more}}}

    nx = {"namedInputs": {"default": ["{projectRoot}/**/*"]},
          "targetDefaults": {"build": {"inputs": ["{projectRoot}/src/**/*"], "cache": True}}}
    projects = {n: builder(n) for n in "abc"}
    projects["d"] = builder("d", inputs=["{projectRoot}/src/**/*"], outputs=["{projectRoot}/dist"])
    files = {f"packages/{n}/{f}": "x\n" for n in "abcd" for f in ("setup.cfg", "src/index.ts")}
    ws = make_workspace(tmp_path / "ws", projects, files, nx=nx)
    report = tmp_path / "report.json"
    r = qk(ws, "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    tasks = json.loads(report.read_text())["tasks"]
    for n in "abcd":
        assert tasks[f"{n}:build"]["findings"] == {"readsOutsideInputs": [f"packages/{n}/setup.cfg"],
                                                   "strayWrites": [f"packages/{n}/build.log"]}, tasks

    untouched = {n: (ws / f"packages/{n}/project.json").read_text() for n in "abc"}
    nx_before = (ws / "nx.json").read_text()
    r = qk(ws, "report", "fix", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("--- a/nx.json\n"), r.stdout
    assert '+      "outputs": ["{projectRoot}/build.log"],' in r.stdout, r.stdout
    assert "--- a/packages/d/project.json\n" in r.stdout and "packages/a/" not in r.stdout, r.stdout

    r = qk(ws, "report", "fix", str(report), "--write")
    assert r.returncode == 0, r.stdout + r.stderr
    build = json.loads((ws / "nx.json").read_text())["targetDefaults"]["build"]
    assert build == {"outputs": ["{projectRoot}/build.log"],
                     "inputs": ["{projectRoot}/src/**/*", "{projectRoot}/setup.cfg"], "cache": True}, build
    # Lines added, and a comma after the element they follow: the rest of nx.json is as written.
    kept = [line.rstrip(",") for line in (ws / "nx.json").read_text().splitlines()
            if "build.log" not in line and "setup.cfg" not in line]
    assert kept == [line.rstrip(",") for line in nx_before.splitlines()], kept
    assert {n: (ws / f"packages/{n}/project.json").read_text() for n in "abc"} == untouched
    d = json.loads((ws / "packages/d/project.json").read_text())["targets"]["build"]
    assert d["inputs"] == ["{projectRoot}/src/**/*", "{projectRoot}/setup.cfg"]
    assert d["outputs"] == ["{projectRoot}/dist", "{projectRoot}/build.log"]
    settled(ws, report, *(f"{n}:build" for n in "abcd"))

    r = qk(ws, "run-many", "-t", "build", "--sandbox=enforce", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr


def test_fix_writes_one_glob_for_every_file_of_a_directory_a_task_reads(tmp_path):
    configs = [f"config/{n}.json" for n in ("a", "b", "c", "d", "e")]
    build = {"command": "cat " + " ".join(configs) + " > /dev/null", "inputs": ["default"]}
    files = {c: "{}\n" for c in configs}
    files["config/README.md"] = "not read\n"
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {"build": build}}}, files)
    report = tmp_path / "report.json"
    r = qk(ws, "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(report.read_text())["tasks"]["app:build"]["findings"] == {"readsOutsideInputs": configs}

    r = qk(ws, "report", "fix", str(report), "--write")
    assert r.returncode == 0, r.stdout + r.stderr
    inputs = json.loads((ws / "packages/app/project.json").read_text())["targets"]["build"]["inputs"]
    assert inputs == ["default", "{workspaceRoot}/config/*.json"], inputs
    settled(ws, report, "app:build")
    # Under enforce the glob puts the files in the task's view; README.md stays out of it.
    r = qk(ws, "run-many", "-t", "build", "--sandbox=enforce", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr


def test_another_tasks_ignored_output_is_a_dependency_not_an_input(tmp_path):
    """Issue 39: a checker (knip) reads what another task builds into a git-ignored dist. An input naming
    the file keys nothing (the key leaves ignored files out), so check judges by what the key holds and
    says so; fix writes that task into dependsOn instead, and check and enforce then pass."""
    gen = {"command": "mkdir -p packages/gen/dist && echo 'export {}' > packages/gen/dist/index.js",
           "outputs": ["{projectRoot}/dist"]}
    checker = {"command": "cat packages/gen/dist/index.js > /dev/null"}
    ws = make_workspace(tmp_path / "ws", {"gen": {"root": "packages/gen", "targets": {"build": gen}},
                                          "check": {"root": "packages/check", "targets": {"check": checker}}},
                        {".gitignore": "dist/\n", "packages/gen/src/a.js": "a\n", "packages/check/src/b.js": "b\n"})
    r = qk(ws, "run-many", "-t", "build")
    assert r.returncode == 0, r.stdout + r.stderr
    report = tmp_path / "report.json"
    r = qk(ws, "run-many", "-t", "check", "--sandbox", "--sandbox-report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    found = json.loads(report.read_text())["tasks"]["check:check"]["findings"]
    assert found == {"readsOutsideInputs": ["packages/gen/dist/index.js"]}, found

    # Declared as an input by its text: the key holds no such file, so it is not ok.
    path = ws / "packages/check/project.json"
    before = path.read_text()
    doc = json.loads(before)
    doc["targets"]["check"]["inputs"] = ["default", "{workspaceRoot}/packages/gen/dist/index.js"]
    path.write_text(json.dumps(doc, indent=2))
    r = check(ws, report)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "declared as inputs, but the key holds no such file" in r.stdout, r.stdout
    path.write_text(before)

    r = qk(ws, "report", "fix", str(report), "--write")
    assert r.returncode == 0 and r.stderr == "", r.stdout + r.stderr
    target = json.loads(path.read_text())["targets"]["check"]
    assert target == {**checker, "dependsOn": [{"projects": ["gen"], "target": "build"}]}, target
    settled(ws, report, "check:check")
    r = qk(ws, "run-many", "-t", "check", "--sandbox=enforce", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
