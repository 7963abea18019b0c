"""Configuration mistakes qk used to take silently: each refused before anything runs, naming the task,
what is wrong and the file to fix."""

from __future__ import annotations

from audit_workspace import make_workspace, qk


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
