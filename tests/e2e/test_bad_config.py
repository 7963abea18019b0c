"""Configuration mistakes qk used to take silently: each refused before anything runs, naming the task,
what is wrong and the file to fix. Among them (issue 38, item 10) configuration that points out of the
workspace (outputs, inputs, a cwd) and a configuration file too large to parse in bounded memory: refused
in a plain run, under audit and under enforce, with nothing written or removed inside the workspace or
outside it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from audit_workspace import QK, make_workspace, qk
from enforce_workspace import snapshot


def test_depends_on_an_unknown_project_names_it_and_the_file(tmp_path):
    ws = make_workspace(tmp_path / "ws", {
        "a": {"root": "p/a", "targets": {"build": {"command": "touch ran", "dependsOn": ["nosuch:build"]}}},
        "b": {"root": "p/b", "targets": {"build": {"command": "true", "dependsOn": ["a:build"]},
                                         "test:types": {"command": "true"},
                                         "check": {"command": "true", "dependsOn": ["test:types"]}}},
    })
    r = qk(ws, "run-many", "-t", "build")
    assert r.returncode != 0
    assert ('a:build: dependsOn names "nosuch:build", but there is no project "nosuch" (nor a target of that '
            'name in a); fix the name in its dependsOn (p/a/project.json, or nx.json\'s targetDefaults "build")') in r.stderr, r.stderr
    assert not (ws / "p/a/ran").exists()
    # A project that exists, and a target whose own name has a colon, are fine.
    ok = qk(ws, "run-many", "-t", "check", "-p", "b")
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_a_malformed_glob_in_inputs_names_the_column_and_the_file(tmp_path):
    ws = make_workspace(tmp_path / "ws", {
        "a": {"root": "p/a", "targets": {"build": {"command": "touch ran", "inputs": ["{projectRoot}/[a-"]}}},
    })
    r = qk(ws, "run-many", "-t", "build")
    assert r.returncode != 0
    assert 'task a:build: its inputs: glob "p/a/[a-": column 5:' in r.stderr, r.stderr
    # make_workspace's nx.json has targetDefaults for build, which may hold inputs too.
    assert "(the target is configured in p/a/project.json, or nx.json)" in r.stderr, r.stderr
    assert not (ws / "p/a/ran").exists()


def test_a_misspelled_target_or_project_gets_a_did_you_mean(tmp_path):
    ws = make_workspace(tmp_path / "ws", {
        "app": {"root": "p/app", "targets": {"build": {"command": "touch ran"}, "test": {"command": "true"},
                                             "lint": {"command": "true"}}},
        "lib": {"root": "p/lib", "targets": {"build": {"command": "true"}}},
    })
    r = qk(ws, "run", "app:biuld")
    assert r.returncode != 0
    assert ('project "app" has no target "biuld" (did you mean "build"?); its targets are: build, lint, test'
            in r.stderr), r.stderr
    r = qk(ws, "run", "ap:build")
    assert r.returncode != 0
    assert 'unknown project "ap" (did you mean "app"?); the workspace\'s projects are: app, lib' in r.stderr, r.stderr
    r = qk(ws, "run-many", "-t", "tset")
    assert r.returncode != 0
    assert ('no project has a target named tset (did you mean "test"?); the workspace\'s targets are: build, lint, '
            'test') in r.stderr, r.stderr
    # Nothing close: the list alone.
    r = qk(ws, "run", "app:deploy")
    assert 'project "app" has no target "deploy"; its targets are: build, lint, test' in r.stderr, r.stderr
    assert not (ws / "p/app/ran").exists()


# Each case: what the target "a:build" is given, and what the error must say (what, where, what to do).
OUT = "(its outputs in p/a/project.json"
CONFIGURED = "(the target is configured in p/a/project.json"
ESCAPES = {
    "output-slash": ({"outputs": ["/"]},
                     ['output "/" is an absolute path; write it from the workspace\'s root or the project\'s', OUT]),
    "output-workspace-root": ({"outputs": ["{workspaceRoot}"]},
                              ['output "{workspaceRoot}" names the whole workspace, which qk would clear to restore '
                               'the task from the cache; name the directories the task writes, such as '
                               '"{projectRoot}/dist"', OUT]),
    "output-dotdot": ({"outputs": [".."]},
                      ['output ".." resolves to "..", which leads outside the workspace; name a path inside it', OUT]),
    "output-up-three": ({"outputs": ["{projectRoot}/../../.."]},
                        ['output "{projectRoot}/../../.." resolves to "p/a/../../..", which leads outside the '
                         'workspace', OUT]),
    "output-up-inside": ({"outputs": ["{projectRoot}/../../dist"]},
                         ['output "{projectRoot}/../../dist" steps up with ".."; write it without, as '
                          '"{workspaceRoot}/dist"', OUT]),
    "output-in-git": ({"outputs": ["{workspaceRoot}/.git/hooks"]},
                      ['output "{workspaceRoot}/.git/hooks" lies in .git, which is git\'s', OUT]),
    "output-path-option": ({"options": {"outputPath": "../../x"}},
                           ['output "../../x" resolves to "../../x", which leads outside the workspace',
                            "(its options.outputPath in p/a/project.json"]),
    "input-dotdot": ({"inputs": ["{projectRoot}/../../../etc/passwd"]},
                     ['input "{projectRoot}/../../../etc/passwd" resolves to "p/a/../../../etc/passwd", which leads '
                      'outside the workspace; name a path inside it', CONFIGURED]),
    "input-up-inside": ({"inputs": ["{projectRoot}/../b/**"]},
                        ['input "{projectRoot}/../b/**" steps up with ".."; write it without, as '
                         '"{workspaceRoot}/p/b/**"', CONFIGURED]),
    "cwd-up": ({"options": {"cwd": "../.."}},
               ['task a:build cannot run: its options.cwd "../.." leads outside the workspace (options.cwd in '
                'p/a/project.json', 'give a directory inside the workspace, relative to its root, such as "p/a" or '
                '"{projectRoot}"']),
    "cwd-absolute": ({"options": {"cwd": "/"}},
                     ['task a:build cannot run: its options.cwd "/" is an absolute path (options.cwd in '
                      'p/a/project.json']),
}
MODES = {"plain": [], "audit": ["--sandbox"], "enforce": ["--sandbox=enforce"]}


def mode_param(mode: str):
    # Audit and enforce record or confine: they need what a recorder and the sandbox need.
    return pytest.param(mode, marks=pytest.mark.privileged) if mode != "plain" else mode


@pytest.mark.parametrize("mode", [mode_param(m) for m in MODES])
@pytest.mark.parametrize("case", list(ESCAPES))
def test_configuration_pointing_out_of_the_workspace_is_refused_and_nothing_moves(tmp_path, case, mode):
    given, says = ESCAPES[case]
    outside = tmp_path / "outside"
    (outside / "dist").mkdir(parents=True)
    (outside / "dist/keep.txt").write_text("kept\n")
    # a:build writes beside itself, where its cwd is, and outside; it depends on b:build, which must not run
    # either: the error comes before anything runs.
    build = {"command": f"touch ran; touch {outside}/touched; mkdir -p p/a/dist && touch p/a/dist/out",
             "dependsOn": ["b:build"], "cache": True, **given}
    ws = make_workspace(tmp_path / "ws", {
        "a": {"root": "p/a", "targets": {"build": build}},
        "b": {"root": "p/b", "targets": {"build": {"command": "touch p/b/ran", "cache": True}}},
    }, files={"p/a/src.txt": "a\n", "p/b/src.txt": "b\n", "p/a/dist/old.txt": "old\n"})
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    before = snapshot(tmp_path, leave_out=())
    root_ran = Path("/ran").exists()  # where "touch ran" lands with cwd "/"
    r = qk(ws, "run-many", "-t", "build", "-p", "a", *MODES[mode])
    assert r.returncode == 2, r.stdout + r.stderr
    for fragment in says:
        assert fragment in r.stderr, r.stderr
    after = snapshot(tmp_path, leave_out=())
    assert {k: v for k, v in after.items() if not k.startswith("ws/.qk")} == before, \
        sorted(set(after.items()) ^ set(before.items()))
    assert not (outside / "touched").exists() and Path("/ran").exists() == root_ran


@pytest.mark.parametrize("mode", [mode_param(m) for m in MODES])
def test_a_100_mib_project_json_is_refused_unread_in_bounded_memory_and_time(tmp_path, mode):
    ws = make_workspace(tmp_path / "ws", {"a": {"root": "p/a", "targets": {"build": {"command": "touch ran"}}}})
    chunk = '"' + "x" * (1 << 20) + '",'
    with open(ws / "p/a/project.json", "w") as f:
        f.write('{"name": "a", "targets": {"build": {"command": "touch ran"}}, "junk": [')
        for _ in range(100):
            f.write(chunk)
        f.write('""]}')
    assert (ws / "p/a/project.json").stat().st_size > 100 << 20
    start = time.monotonic()
    # wait4, not communicate: the run's own peak memory (and its children's), not this process's.
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        proc = subprocess.Popen([str(QK), "run-many", "-t", "build", *MODES[mode]], cwd=ws, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - start
    text = (tmp_path / "out").read_text() + (tmp_path / "err").read_text()
    assert proc.returncode == 2, text
    assert ("qk: p/a/project.json: 100 MiB is more than qk reads of a configuration file (8 MiB; parsed, a file "
            "takes many times its size in memory); one this large was most likely generated or damaged by mistake: "
            "keep in it only what configures the workspace") in text, text
    assert not (ws / "ran").exists()
    # Read whole, the file alone would take 100 MiB (and parsed, several times that).
    assert usage.ru_maxrss < 64 * 1024, f"{usage.ru_maxrss} KiB"
    assert elapsed < 30, elapsed
