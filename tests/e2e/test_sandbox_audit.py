"""qk run-many --sandbox: each task recorded (eBPF and strace alike) and judged by its rules; the summary
in the spec's words and --sandbox-report as JSON, one workspace per finding kind and rule."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

import qk_harness as h
import sandbox_report
from audit_workspace import audit_text, make_workspace, qk, sandbox

RECORDERS = pytest.mark.parametrize("recorder", h.RECORDERS)

# The spec's example: build declares src as input and dist as output, but also reads other/notes.txt
# and .env and writes stray.txt.
SPEC_BUILD = {
    "command": "cat src/main.txt other/notes.txt .env > /dev/null && mkdir -p dist && cp src/main.txt dist/main.txt"
               " && echo stray > stray.txt",
    "inputs": ["{projectRoot}/src"],
    "outputs": ["{projectRoot}/dist"],
    "cache": True,
}
SPEC_FILES = {"src/main.txt": "main\n", "other/notes.txt": "notes\n", ".env": "A=1\n", ".gitignore": "dist\n"}

# The spec's example, and after what the task did, what to declare in its target (issue 14).
SPEC_SUMMARY = """\
Sandbox audit: 1 of 2 tasks went beyond what they declare
  app:build
    1 read outside its inputs:
      other/notes.txt
    1 written outside its outputs:
      stray.txt
    what to declare in its target:
      "inputs": ["{projectRoot}/other/notes.txt"], or in qk:ultracache.ignoreReads if it cannot change the result
      "outputs": ["{projectRoot}/stray.txt"]
  read, which the sandbox allows, but not in their keys: .env (1 task: app:build)
"""


def spec_workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", {"app": {"root": ".", "targets": {"build": SPEC_BUILD,
                                                                                "clean": {"command": "true"}}}},
                          SPEC_FILES)


@RECORDERS
def test_spec_example_summary_and_report(recorder, tmp_path):
    ws = spec_workspace(tmp_path)
    r, doc = sandbox(ws, "build,clean", recorder, tmp_path / "report.json", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    assert audit_text(r.stdout) == SPEC_SUMMARY, r.stdout
    assert doc == {
        "schemaVersion": 1,
        "mode": "audit",
        "recorder": recorder,
        "summary": {"tasks": 2, "audited": 2, "wentBeyond": 1, "restored": 0, "notAudited": 0, "unsandboxed": 0,
                    "refused": 0},
        "tasks": {
            "app:build": {"project": "app", "status": "audited", "findings": {"readsOutsideInputs": ["other/notes.txt"],
                                                            "strayWrites": ["stray.txt"], "unkeyedReads": [".env"]},
                          # beyond the spec's example: what to declare, in the target's terms
                          "suggestions": [
                              {"finding": "readsOutsideInputs", "declare": "inputs",
                               "values": ["{projectRoot}/other/notes.txt"],
                               "orIgnoreReads": ["{projectRoot}/other/notes.txt"]},
                              {"finding": "strayWrites", "declare": "outputs", "values": ["{projectRoot}/stray.txt"]}],
                          # beyond it too: the process behind each finding, then the task's command
                          "processes": {
                              path: ["cat src/main.txt other/notes.txt .env", "/bin/sh -c " + SPEC_BUILD["command"]]
                              for path in ("other/notes.txt", ".env")
                          } | {"stray.txt": ["/bin/sh -c " + SPEC_BUILD["command"]]}},
            "app:clean": {"project": "app", "status": "audited", "findings": {}},
        },
        "readByMany": [],
        "packagesReadByMany": [],
    }


@RECORDERS
def test_restored_tasks_are_not_audited_and_skip_cache_audits_them(recorder, tmp_path):
    ws = spec_workspace(tmp_path)
    first = qk(ws, "run-many", "-t", "build,clean", "--sandbox", recorder=recorder)
    assert first.returncode == 0, first.stdout + first.stderr
    assert audit_text(first.stdout) == SPEC_SUMMARY

    again, doc = sandbox(ws, "build,clean", recorder, tmp_path / "again.json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert audit_text(again.stdout) == (
        "Sandbox audit: 1 task kept to what it declares\n"
        "  1 task restored from the cache, so not audited: app:build\n"
    ), again.stdout
    assert doc["tasks"]["app:build"] == {"project": "app", "status": "restored"}
    assert doc["summary"]["restored"] == 1 and doc["summary"]["audited"] == 1

    skip, doc = sandbox(ws, "build,clean", recorder, tmp_path / "skip.json", "--skip-cache")
    assert audit_text(skip.stdout) == SPEC_SUMMARY, skip.stdout
    assert doc["tasks"]["app:build"]["status"] == "audited"


KINDS_FILES = {
    "tsconfig.base.json": "{}\n",
    ".nvmrc": "20\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    "docs/readme.md": "docs\n",
    "other/notes.txt": "notes\n",
    "packages/app/src/index.ts": "export {}\n",
    "packages/lib/src/lib.ts": "export {}\n",
    "packages/lib/README.md": "lib\n",
    "packages/other/src/o.ts": "export {}\n",
}


def kinds_workspace(tmp_path: Path) -> Path:
    app_targets = {
        "tsconfig": {"command": "cat tsconfig.base.json > /dev/null", "inputs": ["{projectRoot}/src/**/*"]},
        "manifest": {"command": "cat packages/other/package.json > /dev/null"},
        "toolchain": {"command": "cat .nvmrc > /dev/null"},
        "deps": {"command": "cat packages/lib/src/lib.ts > /dev/null", "inputs": ["default"]},
        "git": {"command": "cat .git/HEAD > /dev/null && echo x > .git/qk-test"},
        "effect": {"command": "cat nx.json > /dev/null"},
        "effectdeclared": {"command": "cat nx.json > /dev/null", "inputs": ["{workspaceRoot}/nx.json"]},
        "writtenread": {"command": "echo v > packages/app/version.txt && cat packages/app/version.txt"},
        "outdir": {
            "command": "test -d packages/app/out/sub && rmdir packages/app/out/sub packages/app/out"
                       " && mkdir -p packages/app/out/sub && echo r > packages/app/out/sub/result.txt"
                       " && echo o > packages/app/out/other.txt",
            "outputs": ["{projectRoot}/out/sub/result.txt"],
        },
        "emptydir": {"command": "test -d packages/app/gen/deep", "outputs": ["{projectRoot}/gen/deep/x.txt"]},
        "ignored": {
            "command": "cat docs/readme.md packages/lib/README.md > /dev/null",
            "qk:ultracache": {"ignoreReads": ["{workspaceRoot}/docs/**", "^README.md"]},
        },
        "scratch": {
            "command": "mkdir -p packages/app/.tool-cache && echo c > packages/app/.tool-cache/c"
                       " && cat packages/app/.tool-cache/c > /dev/null",
            "qk:sandbox": {"scratch": ["{projectRoot}/.tool-cache"]},
        },
        "kept": {"command": "cat packages/app/src/index.ts > /dev/null"},
        "usesdep": {"command": "cat packages/lib/dist/lib.js > /dev/null", "dependsOn": ["^build"],
                    "inputs": ["default"]},
        "warm": {"command": "mkdir -p packages/app/.warm && echo w > packages/app/.warm/state"
                            " && cat packages/app/.warm/state > /dev/null", "qk:warm": ["{projectRoot}/.warm"]},
        "failing": {"command": "cat other/notes.txt > /dev/null; exit 3"},
        "unsandboxed": {"command": "cat other/notes.txt > /dev/null", "qk:sandbox": False},
        "both": {"executor": "nx:run-commands", "options": {
            "commands": ["cat other/notes.txt > /dev/null", "cat docs/readme.md > /dev/null"], "parallel": True}},
    }
    projects = {
        "app": {"root": "packages/app", "targets": app_targets, "depends": ["lib"]},
        "lib": {"root": "packages/lib", "targets": {"build": {
            "command": "mkdir -p packages/lib/dist && cp packages/lib/src/lib.ts packages/lib/dist/lib.js",
            "outputs": ["{projectRoot}/dist"]}}},
        "other": {"root": "packages/other", "targets": {}},
    }
    return make_workspace(tmp_path / "ws", projects, KINDS_FILES)


@RECORDERS
def test_each_finding_kind_and_rule(recorder, tmp_path):
    ws = kinds_workspace(tmp_path)
    targets = "tsconfig,manifest,toolchain,deps,git,effect,effectdeclared,writtenread,outdir,emptydir,ignored," \
              "scratch,kept,failing,unsandboxed,both,usesdep,warm"
    r, doc = sandbox(ws, targets, recorder, tmp_path / "report.json", "-p", "app", "--parallel", "2")
    assert r.returncode == 1, r.stdout + r.stderr  # app:failing fails
    tasks = doc["tasks"]
    findings = {t: v.get("findings") for t, v in tasks.items()}
    assert findings == {
        "app:tsconfig": {"tsconfigReads": ["tsconfig.base.json"]},
        "app:manifest": {"manifestReads": ["packages/other/package.json"]},
        "app:toolchain": {"toolchainReads": [".nvmrc"]},
        "app:deps": {"dependencyReads": {"lib": ["packages/lib/src/lib.ts"]}},
        "app:git": {"unkeyedReads": [".git/HEAD"], "strayWrites": [".git/qk-test"]},
        "app:effect": {"readsOutsideInputs": ["nx.json"]},
        "app:effectdeclared": {},
        "app:writtenread": {"strayWrites": ["packages/app/version.txt"]},
        "app:outdir": {"strayWrites": ["packages/app/out/other.txt"]},
        "app:emptydir": {},
        "app:ignored": {},
        "app:scratch": {},
        "app:kept": {},
        "app:usesdep": {},
        "app:warm": {},
        "lib:build": {},
        "app:failing": {"readsOutsideInputs": ["other/notes.txt"]},
        "app:unsandboxed": None,
        "app:both": {"readsOutsideInputs": ["docs/readme.md", "other/notes.txt"]},
    }, json.dumps(findings, indent=1)
    assert tasks["app:unsandboxed"] == {"project": "app", "status": "unsandboxed", "reason": '"qk:sandbox": false on its target'}
    # Output directories made for the task and left empty are removed again.
    assert not (ws / "packages/app/gen").exists()
    assert (ws / "packages/app/out/sub/result.txt").exists()
    s = doc["summary"]
    # .git reads and writes do not count; manifest, toolchain and dependency reads do.
    assert (s["tasks"], s["audited"], s["wentBeyond"], s["unsandboxed"]) == (19, 18, 9, 1), s

    text = audit_text(r.stdout)
    assert text.startswith("Sandbox audit: 9 of 18 tasks went beyond what they declare\n"), text
    assert "  1 workspace package's package.json read by 1 task: app:manifest\n" in text
    assert "  version and package managers' configuration read: .nvmrc (1 task: app:toolchain)\n" in text
    # A root toolchain file is declared once, in nx.json, for every task.
    assert '    "namedInputs": {"sharedGlobals": ["{workspaceRoot}/.nvmrc"]}\n' in text
    assert "  app:deps\n    read in projects it depends on: lib (1 file)\n" in text
    assert "  app:tsconfig\n    1 TypeScript configuration read outside its inputs, likely an input:\n" \
           "      tsconfig.base.json\n" in text
    # Tasks with nothing of their own to say are one line, not a block each.
    assert "only reads counted above" not in text
    assert "  2 tasks went beyond only by what is counted above: app:manifest, app:toolchain\n" in text
    # nx.json is held by effect: declared to be read, never offered to ignoreReads.
    assert '  app:effect\n    1 read outside its inputs:\n      nx.json\n    what to declare in its target:\n' \
           '      "inputs": ["{workspaceRoot}/nx.json"]\n' in text
    assert "  read, which the sandbox allows, but not in their keys: .git/HEAD (1 task: app:git)\n" in text
    assert "  1 task wrote in .git, which the sandbox allows: app:git\n" in text
    assert '  1 task ran unsandboxed:\n    app:unsandboxed: "qk:sandbox": false on its target\n' in text
    assert "\n  app:git\n" not in text  # what the sandbox allows gives a task no block of its own


@RECORDERS
def test_a_left_out_dependency_still_names_the_outputs_it_may_read(recorder, tmp_path):
    """With --exclude-task-dependencies, lib:build does not run, but its outputs already in place are still
    what app:usesdep (dependsOn ^build) may read, as `qk show task --rules` lists them."""
    ws = kinds_workspace(tmp_path)
    first = qk(ws, "run-many", "-t", "build", "-p", "lib")
    assert first.returncode == 0 and (ws / "packages/lib/dist/lib.js").exists(), first.stdout + first.stderr
    r, doc = sandbox(ws, "usesdep", recorder, tmp_path / "report.json", "-p", "app", "--exclude-task-dependencies")
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(doc["tasks"]) == ["app:usesdep"], doc  # lib:build did not run
    assert doc["tasks"]["app:usesdep"] == {"project": "app", "status": "audited", "findings": {}}, doc
    rules = qk(ws, "show", "task", "app:usesdep", "--rules")
    assert re.search(r"read\s+packages/lib/dist\n\s+\(outputs of lib:build\)", rules.stdout), rules.stdout


@RECORDERS
def test_paths_read_by_many_tasks_are_listed_once(recorder, tmp_path):
    targets = {f"t{i}": {"command": f"cat tools/shared.js other/{i}.txt > /dev/null"} for i in range(3)}
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": targets}},
                        {"tools/shared.js": "x\n", **{f"other/{i}.txt": "o\n" for i in range(3)}})
    r, doc = sandbox(ws, "t0,t1,t2", recorder, tmp_path / "report.json", "--parallel", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["readByMany"] == [{"path": "tools/shared.js", "tasks": 3}]
    assert doc["sharedSuggestions"] == [{"namedInput": "sharedGlobals", "values": ["{workspaceRoot}/tools/shared.js"],
                                         "orIgnoreReads": ["{workspaceRoot}/tools/shared.js"], "targets": ["t0", "t1", "t2"],
                                         "tasks": 3}]
    # Each task's own list in the report keeps it; the summary lists it once, at the top.
    assert doc["tasks"]["app:t1"]["findings"] == {"readsOutsideInputs": ["other/1.txt", "tools/shared.js"]}
    assert audit_text(r.stdout) == (
        "Sandbox audit: 3 of 3 tasks went beyond what they declare\n"
        "  read by many tasks:\n"
        "    tools/shared.js (3 tasks: app:t0, app:t1, app:t2)\n"
        "  what to declare once, in nx.json, rather than in each target:\n"
        '    "namedInputs": {"sharedGlobals": ["{workspaceRoot}/tools/shared.js"]}\n'
        '      with "sharedGlobals" in "default" ("default": ["{projectRoot}/**/*", "sharedGlobals"]), and in the inputs '
        "of targets that name theirs without it\n"
        "      what cannot change the results may go in qk:ultracache.ignoreReads (in targetDefaults) instead\n"
        + "".join(f"  app:t{i}\n    1 read outside its inputs:\n      other/{i}.txt\n"
                  "    what to declare in its target:\n"
                  f'      "inputs": ["{{workspaceRoot}}/other/{i}.txt"], or in qk:ultracache.ignoreReads if it cannot '
                  "change the result\n"
                  "    and 1 file many tasks read: in nx.json, above\n" for i in range(3))
    ), r.stdout


@pytest.mark.privileged(recorder="ebpf")
def test_a_task_that_lost_events_is_not_audited(tmp_path, scenario_path):
    burst = scenario_path("burst")
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {
        "burst": {"command": f"{burst} packages/app 200000 && cat other/notes.txt > /dev/null"},
    }}}, {"packages/app/burst.txt": "b\n", "other/notes.txt": "n\n"})
    r, doc = sandbox(ws, "burst", "ebpf", tmp_path / "report.json", env={"QK_RING_BUFFER_BYTES": "4096"})
    assert r.returncode == 0, r.stdout + r.stderr
    task = doc["tasks"]["app:burst"]
    assert task["status"] == "notAudited" and "findings" not in task, task
    assert re.search(r"\d+ events were lost", task["reason"]), task
    text = audit_text(r.stdout)
    assert text.startswith("Sandbox audit: no task was audited\n"), text
    assert "  1 task not audited:\n    app:burst: the recording is incomplete: " in text
    assert "other/notes.txt" not in text


def test_bad_sandbox_options_are_refused_before_anything_runs(tmp_path):
    ws = spec_workspace(tmp_path)
    cases = [
        (["--sandbox=enforce"], {"QK_SANDBOX_EXEC": "/nonexistent/qk-sandbox-exec"},
         "QK_SANDBOX_EXEC=/nonexistent/qk-sandbox-exec cannot be run"),
        (["--sandbox=strict"], {}, "--sandbox=strict is not a mode"),
        (["--sandbox", "--sandbox-report", str(tmp_path / "missing" / "r.json")], {}, "does not exist"),
        (["--sandbox-report", str(tmp_path / "r.json")], {}, "--sandbox-report needs --sandbox"),
        (["--sandbox"], {"QK_RECORDER": "dtrace"}, "QK_RECORDER: unknown recorder 'dtrace'"),
        (["--sandbox", "--recorder", "dtrace"], {}, "unknown recorder 'dtrace'"),
    ]
    for args, env, message in cases:
        r = qk(ws, "run-many", "-t", "build", *args, env=env)
        assert r.returncode != 0, (args, r.stdout, r.stderr)
        assert message in r.stderr, (args, r.stderr)
        assert not (ws / "dist").exists() and not (ws / "stray.txt").exists(), args


@pytest.mark.privileged
def test_a_recorder_named_that_cannot_record_fails_the_run(tmp_path):
    ws = spec_workspace(tmp_path)
    r = qk(ws, "run-many", "-t", "build", "--sandbox", recorder="strace", env={"PATH": "/nonexistent"})
    assert r.returncode != 0, r.stdout + r.stderr
    assert "strace" in r.stderr and "not installed" in r.stderr, r.stderr
    assert not (ws / "stray.txt").exists()


def test_show_task_rules(tmp_path):
    ws = kinds_workspace(tmp_path)
    r = qk(ws, "show", "task", "app:scratch", "--rules")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("app:scratch: what the sandbox lets it do in the workspace\n"), r.stdout
    assert re.search(r"read, write\s+packages/app/\.tool-cache\n\s+\(its scratch directories", r.stdout), r.stdout
    assert re.search(r"reported\s+the files of lib\n", r.stdout), r.stdout
    j = qk(ws, "show", "task", "app:outdir", "--rules", "--json")
    doc = json.loads(j.stdout)
    rules = {(x["access"], x["paths"]) for x in doc["rules"]}
    assert ("read, write", "packages/app/out/sub/result.txt") in rules
    assert ("create, remove", "packages, packages/app, packages/app/out, packages/app/out/sub") in rules


@RECORDERS
@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_sandboxed_run_stops_its_tasks_and_leaves_no_cgroup(recorder, sig, status, tmp_path):
    """The stopped task is not audited (its recording ended early); its processes, its cgroup and the
    output directories made for it are gone; the report is still written."""
    marker = tmp_path / "started"
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {"build": {
        "command": f"cat other/notes.txt > /dev/null && echo $$ > {marker}.tmp && mv {marker}.tmp {marker}"
                   " && exec sleep 60",
        "outputs": ["{projectRoot}/out/deep/x.txt"],
    }}}}, {"other/notes.txt": "n\n"})
    report = tmp_path / "report.json"
    env = dict(os.environ, QK_RECORDER=recorder)
    proc = subprocess.Popen([str(h.BUILD_DIR / "qk"), "run-many", "-t", "build", "--sandbox", "--sandbox-report",
                             str(report)], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():  # the task's command has started (not a timing assumption)
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the task never started"
            time.sleep(0.02)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, out + err
    pid = int(marker.read_text())
    status_file = Path(f"/proc/{pid}/status")
    assert not status_file.exists() or "State:\tZ" in status_file.read_text(), f"the task's sleep {pid} survived"
    mount = h.cgroup2_mount()
    left = [p.name for p in (Path(mount) / "qk").glob(f"*-{proc.pid}-*")] if mount else []
    assert left == [], f"cgroups left behind: {left}"
    assert not (ws / "packages/app/out").exists()
    doc = sandbox_report.checked(json.loads(report.read_text()))
    assert doc["tasks"]["app:build"] == {"project": "app", "status": "notAudited",
                                         "reason": "the run was interrupted before it finished"}, doc


@pytest.mark.privileged
def test_with_auto_and_no_working_recorder_the_run_goes_on_unaudited_and_says_so(tmp_path):
    """Run as an unprivileged user (eBPF cannot load) with no strace on PATH: nothing can record, so with
    QK_RECORDER=auto the tasks still run, and the audit says why none was audited."""
    import shutil
    import tempfile
    base = Path(tempfile.mkdtemp(prefix="qk-norec-"))
    try:
        ws = spec_workspace(base)
        for p in [base, *base.rglob("*")]:
            os.chmod(p, 0o777 if p.is_dir() else 0o666)
        report = base / "report.json"
        tools = base / "bin"  # what the task needs, and no strace
        tools.mkdir()
        for tool in ("cat", "mkdir", "cp"):
            (tools / tool).symlink_to(shutil.which(tool))
        env = {"PATH": str(tools), "QK_RECORDER": "auto", "HOME": str(base)}
        r = subprocess.run(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            str(h.BUILD_DIR / "qk"), "run-many", "-t", "build", "--sandbox", "--sandbox-report",
                            str(report)], cwd=ws, capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        assert (ws / "dist/main.txt").exists() and (ws / "stray.txt").exists()  # the task ran
        assert "libbpf" not in r.stdout, r.stdout  # the reason in a line, not libbpf's log
        assert "qk: the sandbox cannot audit any task: no recorder works here: eBPF: " in r.stdout, r.stdout
        text = audit_text(r.stdout)
        assert text.startswith("Sandbox audit: no task was audited: no recorder works here: eBPF: "), text
        assert "strace is not installed" in text.splitlines()[0], text
        assert len(text.splitlines()) == 1, text
        doc = sandbox_report.checked(json.loads(report.read_text()))
        assert doc["recorder"] is None and doc["recorderUnavailable"].startswith("no recorder works here"), doc
        assert doc["tasks"] == {"app:build": {"project": "app", "status": "notAudited", "reason": "no recorder works here"}}
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.privileged("ebpf")
def test_a_file_created_and_removed_again_is_temporary_not_a_stray_write(tmp_path):
    """vite writes vite.config.ts.timestamp-<n>.mjs beside its config and removes it: nothing is left,
    so the task did not go beyond its declarations; a file that was there before and is removed is."""
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "app", "targets": {"build": {
        "command": ("echo x > app/config.timestamp-1.mjs && cat app/config.timestamp-1.mjs > /dev/null && "
                    "rm app/config.timestamp-1.mjs && mkdir -p app/dist && echo ok > app/dist/out"),
        "outputs": ["{projectRoot}/dist"]}}}}, files={"app/src.txt": "x\n"})
    report = tmp_path / "report.json"
    r = qk(ws, "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report), recorder="ebpf")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(report.read_text())
    findings = doc["tasks"]["app:build"]["findings"]
    assert findings.get("temporaryFiles") == ["app/config.timestamp-1.mjs"], findings
    assert "strayWrites" not in findings
    assert "Sandbox audit: 1 task kept to what it declares" in r.stdout  # temporary files do not count

    # A file that was there before and that the task removes is a change it made.
    ws2 = make_workspace(tmp_path / "ws2", {"app": {"root": "app", "targets": {"build": {
        "command": "rm app/old.txt", "outputs": []}}}}, files={"app/old.txt": "x\n", "app/src.txt": "x\n"})
    r = qk(ws2, "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report), recorder="ebpf")
    findings = json.loads(report.read_text())["tasks"]["app:build"]["findings"]
    assert findings.get("strayWrites") == ["app/old.txt"], findings
    assert "temporaryFiles" not in findings


@RECORDERS
def test_a_build_reading_back_the_directory_it_wrote_is_told_to_declare_it_as_an_output(recorder, tmp_path):
    """The build makes lib (no output names it), writes lib/cjs/index.cjs under a temporary name and renames
    it into place, then reads it back: one write, listed once, and the advice is the output lib, whole,
    never an input."""
    build = ("mkdir -p packages/app/lib/cjs && cp packages/app/src/index.js packages/app/lib/cjs/.index.cjs.part"
             " && mv packages/app/lib/cjs/.index.cjs.part packages/app/lib/cjs/index.cjs"
             " && cat packages/app/lib/cjs/index.cjs > /dev/null")
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {"build": {"command": build}}}},
                        {"packages/app/src/index.js": "export {}\n"})
    r, doc = sandbox(ws, "build", recorder, tmp_path / "report.json", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    task = doc["tasks"]["app:build"]
    assert "readsOutsideInputs" not in task["findings"], task
    assert "packages/app/lib/cjs/index.cjs" in task["findings"]["strayWrites"], task
    assert [s for s in task["suggestions"] if s["declare"] == "inputs"] == [], task
    assert {"finding": "strayWrites", "declare": "outputs", "values": ["{projectRoot}/lib"]} in task["suggestions"]
    text = audit_text(r.stdout)
    assert '      "outputs": ["{projectRoot}/lib"]\n' in text, text
    assert '"inputs"' not in text, text


@RECORDERS
def test_what_many_tasks_read_is_one_nx_json_change_and_a_tool_scanning_siblings_one_glob(recorder, tmp_path):
    """Each task reads .npmrc and pnpm-workspace.yaml as pnpm does; each test reads every project's
    tsconfig.json as vite-tsconfig-paths does; one lint reads a cache file named for one run. The summary
    says the nx.json change once and names the tasks it counts; the tests, with nothing of their own, are
    one line."""
    names = ["a", "b", "c", "d"]
    pnpm = "cat .npmrc pnpm-workspace.yaml > /dev/null"
    projects = {n: {"root": f"packages/{n}", "targets": {
        "build": {"command": pnpm},
        "test": {"command": f"{pnpm} && cat packages/*/tsconfig.json > /dev/null"},
    }} for n in names}
    projects["a"]["targets"]["build"]["command"] += " && cat .cache/eslint-1796405520738-3f2a1b.json > /dev/null"
    files = {".npmrc": "x=1\n", ".cache/eslint-1796405520738-3f2a1b.json": "{}\n",
             **{f"packages/{n}/tsconfig.json": "{}\n" for n in names}}
    ws = make_workspace(tmp_path / "ws", projects, files)
    r, doc = sandbox(ws, "build,test", recorder, tmp_path / "report.json", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["sharedSuggestions"] == [
        {"namedInput": "sharedGlobals", "values": ["{workspaceRoot}/.npmrc", "{workspaceRoot}/pnpm-workspace.yaml"],
         "orIgnoreReads": ["{workspaceRoot}/.npmrc"], "targets": ["build", "test"], "tasks": 8},
        {"namedInput": "sharedGlobals", "values": ["{workspaceRoot}/packages/*/tsconfig.json"],
         "orIgnoreReads": ["{workspaceRoot}/packages/*/tsconfig.json"],
         "preferIgnoreReads": "one tool reads the tsconfig.json of every directory there, likely only to find paths "
                              "(as vite-tsconfig-paths does)",
         "targets": ["test"], "tasks": 4}], doc["sharedSuggestions"]
    # Each task's report keeps its own suggestions whole; a name made for one run is never one of them.
    a_build = doc["tasks"]["a:build"]
    assert a_build["findings"]["readsOutsideInputs"] == [".cache/eslint-1796405520738-3f2a1b.json",
                                                          "pnpm-workspace.yaml"], a_build
    assert "1796405520738" not in json.dumps(a_build["suggestions"]), a_build
    text = audit_text(r.stdout)
    assert text.count('"namedInputs"') == 1 and text.count("what to declare once") == 1, text
    assert "  version and package managers' configuration read: .npmrc (8 tasks: a:build, a:test, b:build and 5 more)\n" \
           in text, text
    assert "    packages/*/tsconfig.json (4 files, 4 tasks: a:test, b:test, c:test, d:test): TypeScript configuration\n" \
           in text, text
    assert '    "targetDefaults": {"test": {"qk:ultracache": {"ignoreReads": ["{workspaceRoot}/packages/*/tsconfig.json"]}}}\n' \
           in text, text
    assert "      .cache/eslint-1796405520738-3f2a1b.json (named for this run: a temporary file, nothing to declare)\n" \
           in text, text
    assert "  7 tasks went beyond only by what is counted above: a:test, b:build, b:test and 4 more\n" in text, text
    # Said at the top only: what many read, the namedInputs line, and why it is never to ignore.
    assert "only reads counted above" not in text and text.count("pnpm-workspace.yaml") == 3, text
