"""qk show projects / project / task on tests/fixtures/workspaces/keys: what a user debugging a key sees.
No privileges needed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import qk_harness as h

QK = h.BUILD_DIR / "qk"
FIXTURES = h.SOURCE_DIR / "tests" / "fixtures" / "workspaces"


def qk(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(QK), *args], cwd=ws, capture_output=True, text=True, timeout=60)


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    ws = tmp_path / "keys"
    shutil.copytree(FIXTURES / "keys", ws)
    return ws


def test_show_projects(keys: Path):
    assert qk(keys, "show", "projects").stdout == "a\nb\nc\n"
    assert json.loads(qk(keys, "show", "projects", "--json").stdout) == ["a", "b", "c"]


def test_a_project_json_in_an_ignored_directory_is_no_project(keys: Path):
    # As Nx 16 and later: a project must not be excluded from the repository. qk discovers projects among
    # the files its index lists (one walk of the tree), so ignore files apply to discovery too.
    gen = keys / "generated" / "lib"
    gen.mkdir(parents=True)
    (gen / "project.json").write_text(json.dumps({"name": "generated-lib", "targets": {"build": {"command": "true"}}}))
    assert qk(keys, "show", "projects").stdout == "a\nb\nc\ngenerated-lib\n"
    (keys / ".gitignore").write_text((keys / ".gitignore").read_text() + "generated\n"
                                     if (keys / ".gitignore").exists() else "generated\n")
    assert qk(keys, "show", "projects").stdout == "a\nb\nc\n"
    # An .nxignore that lets it back in, as Nx's answer to the same question, makes it a project again.
    (keys / ".nxignore").write_text("!generated\n")
    shown = qk(keys, "show", "projects")
    assert shown.stdout == "a\nb\nc\ngenerated-lib\n", shown.stdout + shown.stderr


def test_show_project(keys: Path):
    text = qk(keys, "show", "project", "a")
    assert text.returncode == 0, text.stderr
    assert "root          packages/a" in text.stdout
    assert "depends on    b" in text.stdout
    assert "$ echo build a --outputPath=dist/custom-a" in text.stdout
    doc = json.loads(qk(keys, "show", "project", "a", "--json").stdout)
    assert doc["name"] == "a" and doc["root"] == "packages/a"
    assert doc["dependencies"] == ["b"]
    assert set(doc["targets"]) == {"build", "docs", "lint", "test", "tsconfig", "typecheck"}
    assert doc["targets"]["build"]["outputs"] == ["{projectRoot}/dist", "{workspaceRoot}/dist/{projectName}",
                                                  "{options.outputPath}"]


def test_show_project_text_lists_each_targets_inputs_outputs_and_depends_on(keys: Path):
    # What --json holds, readable: targetDefaults applied, tokens as written, objects as compact JSON.
    text = qk(keys, "show", "project", "a")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    build = lines.index("    build  (nx:run-commands, cached)")
    assert lines[build + 1:build + 5] == [
        "      $ echo build a --outputPath=dist/custom-a",
        "      inputs     production, ^production",
        "      outputs    {projectRoot}/dist, {workspaceRoot}/dist/{projectName}, {options.outputPath}",
        "      dependsOn  ^build",
    ]
    assert '      inputs     default, {workspaceRoot}/tools/**/*.js, {"externalDependencies":["eslint"]}, ' \
           '{"runtime":"echo lint-runtime"}' in lines
    typecheck = lines.index("    typecheck  (nx:run-commands)")
    assert lines[typecheck + 3] == "      dependsOn  build"
    # A target that declares no inputs shows what Nx gives it; one without outputs or dependsOn, no line.
    (keys / "d").mkdir()
    (keys / "d" / "project.json").write_text(json.dumps({"name": "d", "targets": {"fmt": {"command": "true"}}}))
    d = qk(keys, "show", "project", "d")
    assert d.returncode == 0, d.stderr
    assert d.stdout.splitlines()[-3:] == ["    fmt  (nx:run-commands)", "      $ true",
                                          "      inputs     default, ^default  (none declared)"]


def test_show_task_lists_inputs_files_and_key_parts(keys: Path):
    r = qk(keys, "show", "task", "a:build", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["task"] == "a:build"
    assert doc["dependsOn"] == ["b:build"]
    assert doc["outputs"] == ["packages/a/dist", "dist/a", "dist/custom-a"]
    groups = {g["origin"]: g for g in doc["inputs"]}
    assert [f["path"] for f in groups["production"]["files"]] == [
        "packages/a/README.md", "packages/a/package.json", "packages/a/project.json",
        "packages/a/src/index.spec.ts", "packages/a/src/index.ts"]
    assert groups["production"]["patterns"] == ["!packages/a/e2e/**", "packages/a/**/*"]
    assert [f["path"] for f in groups["^production (b)"]["files"]] == [
        "packages/b/README.md", "packages/b/package.json", "packages/b/src/index.ts"]
    assert groups["production, ^production (b), ^production (c)"]["project"] is None
    assert [f["path"] for f in doc["always"]] == [".gitignore", "packages/a/package.json"]
    assert [e["path"] for e in doc["effectFiles"]] == [
        "nx.json", "packages/a/project.json", "pnpm-workspace.yaml", "package.json", "pnpm-lock.yaml"]
    assert doc["packages"]["source"] == "importers"
    assert doc["packages"]["importers"] == ["packages/a", "."]
    assert doc["packages"]["count"] == 2
    assert [d["task"] for d in doc["dependencyTasks"]] == ["b:build"]
    assert [e["name"] for e in doc["env"]] == ["QK_TEST_SHARED"]
    # Every file hash is the content hash qk prints for it in every group, and the text form agrees.
    text = qk(keys, "show", "task", "a:build").stdout
    assert doc["hash"] in text
    assert "packages/a/src/index.ts" in text


def test_show_task_hash_moves_with_an_input_and_comes_back(keys: Path):
    def hash_of() -> str:
        return json.loads(qk(keys, "show", "task", "a:build", "--json").stdout)["hash"]

    before = hash_of()
    src = keys / "packages/c/src/index.ts"
    original = src.read_text()
    src.write_text("export const c = 42;\n")
    assert hash_of() != before
    src.write_text(original)
    assert hash_of() == before


@pytest.mark.parametrize("args, message", [
    (("show", "task", "a"), 'qk: "a" is not a task; write it as project:target (or project:target:configuration)'),
    (("show", "task", "zz:build"), "zz"),
    (("show", "task", "a:nope"), "nope"),
    (("show", "project", "zz"), "zz"),
])
def test_show_errors(keys: Path, args, message):
    r = qk(keys, *args)
    assert r.returncode == 2
    assert message in r.stderr, r.stderr
