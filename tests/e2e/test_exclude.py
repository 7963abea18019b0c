"""qk run-many --exclude, as CI scripts pass it to Nx: project names, globs, tag:, and globs over
project roots such as examples/**, taken out of what -p selects (or of every project)."""

from __future__ import annotations

import json

from audit_workspace import make_workspace, qk, write


def workspace(tmp_path):
    ws = make_workspace(tmp_path / "ws", {
        "app": {"root": "packages/app", "targets": {"build": {"command": "echo built-app"}}},
        "lib": {"root": "packages/lib", "targets": {"build": {"command": "echo built-lib"}}},
        "demo": {"root": "examples/demo", "targets": {"build": {"command": "echo built-demo"}}},
    })
    # a tag on lib, in its project.json
    pj = ws / "packages/lib/project.json"
    doc = json.loads(pj.read_text())
    doc["tags"] = ["scope:internal"]
    write(ws, "packages/lib/project.json", json.dumps(doc))
    return ws


def ran(stdout: str) -> set[str]:
    return {name for name in ("app", "lib", "demo") if f"built-{name}" in stdout}


def test_exclude_takes_projects_out_by_name_tag_and_root_glob(tmp_path):
    ws = workspace(tmp_path)
    cases = {
        ("--exclude", "lib"): {"app", "demo"},
        ("--exclude", "tag:scope:internal"): {"app", "demo"},
        ("--exclude", "examples/**"): {"app", "lib"},
        ("--exclude", "app,demo"): {"lib"},
        ("-p", "app,lib", "--exclude", "app"): {"lib"},
    }
    for args, expected in cases.items():
        r = qk(ws, "run-many", "-t", "build", "--skip-cache", *args)
        assert r.returncode == 0, (args, r.stdout + r.stderr)
        assert ran(r.stdout) == expected, (args, r.stdout)


def test_excluding_every_project_says_nothing_is_left(tmp_path):
    ws = workspace(tmp_path)
    r = qk(ws, "run-many", "-t", "build", "--exclude", "*")
    assert r.returncode != 0
    assert "--exclude * leaves no project to run: it matches every project selected" in r.stderr
