"""Audit and enforce judge the same reads alike, where the spec's walk once let them differ: a json
input whose file is a symbolic link (its target readable, spec: "including its symlink target"), and a
project nested in a dependency's directory under ignoreReads' "^" globs (its files are its own, so "^**"
does not reach them). Each workspace runs plain, under --sandbox (audit), and under --sandbox=enforce
over the overlay and with Landlock alone; the outputs and what each names must agree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import qk_harness as h
from audit_workspace import make_workspace, qk, sandbox
from enforce_workspace import MODES, enforce

pytestmark = pytest.mark.privileged(recorder="ebpf")


def run_every_mode(ws: Path, targets: str, tmp_path: Path, output: Path) -> dict:
    """Plain, audit, and enforce in each mode, the output removed before each: mode -> (run, task
    entries of its report, or None for the plain run, the output's text or None)."""
    out = {}

    def produced():
        return output.read_text() if output.exists() else None

    def clear():
        if output.exists():
            output.unlink()

    clear()
    plain = qk(ws, "run-many", "-t", targets, "--skip-cache")
    out["plain"] = (plain, None, produced())
    clear()
    r, doc = sandbox(ws, targets, "ebpf", tmp_path / "audit.json", "--skip-cache")
    out["audit"] = (r, doc["tasks"], produced())
    for mode in MODES:
        clear()
        r, doc = enforce(ws, targets, tmp_path / f"{mode}.json", "--skip-cache", mode=mode, recorder="ebpf")
        out[mode] = (r, doc["tasks"], produced())
    return out


# ---------------------------------------------------------------------------------------------------
# A json input that is a link


def json_link_workspace(root: Path) -> Path:
    build = {
        "command": "mkdir -p packages/app/dist && cat packages/app/config.json packages/app/chain.json"
                   " > packages/app/dist/out.json",
        "inputs": [{"json": "{projectRoot}/config.json", "fields": ["name"]}, {"json": "{projectRoot}/chain.json"}],
        "outputs": ["{projectRoot}/dist"],
        "cache": False,
    }
    ws = make_workspace(root, {"app": {"root": "packages/app", "targets": {"build": build}}}, {
        "shared/config.real.json": '{"name": "real"}\n',
        "shared/deeper/final.json": '{"name": "final"}\n',
        "shared/beside.json": '{"name": "beside"}\n',
        ".gitignore": "dist\n",
    })
    # config.json leads to a file of shared/; chain.json through a link and a directory link to another.
    os.symlink("../../shared/config.real.json", ws / "packages/app/config.json")
    os.symlink("deeper", ws / "shared/hop-dir")
    os.symlink("hop-dir/final.json", ws / "shared/hop.json")
    os.symlink("../../shared/hop.json", ws / "packages/app/chain.json")
    return ws


def test_a_json_input_that_is_a_link_is_read_where_it_leads_in_every_mode(tmp_path):
    ws = json_link_workspace(tmp_path / "ws")
    runs = run_every_mode(ws, "build", tmp_path, ws / "packages/app/dist/out.json")
    expected = '{"name": "real"}\n{"name": "final"}\n'
    for mode, (r, tasks, produced) in runs.items():
        assert r.returncode == 0, f"{mode}:\n{r.stdout}{r.stderr}"
        assert produced == expected, f"{mode}: {produced!r}"
        if tasks is not None:
            assert tasks["app:build"]["findings"] == {}, f"{mode}: {tasks}"
    assert runs["audit"][1]["app:build"]["status"] == "audited"
    for mode in MODES:
        assert runs[mode][1]["app:build"]["status"] == "enforced", runs[mode][1]


def test_the_json_link_allows_its_target_only(tmp_path):
    # The file beside the target stays refused, in both modes, and the audit lists it: the link widens
    # nothing but the one file.
    ws = json_link_workspace(tmp_path / "ws")
    config = json.loads((ws / "packages/app/project.json").read_text())
    config["targets"]["build"]["command"] = ("mkdir -p packages/app/dist && cat packages/app/config.json"
                                             " shared/beside.json > packages/app/dist/out.json")
    (ws / "packages/app/project.json").write_text(json.dumps(config))
    runs = run_every_mode(ws, "build", tmp_path, ws / "packages/app/dist/out.json")
    assert runs["plain"][0].returncode == 0
    assert runs["audit"][1]["app:build"]["findings"] == {"readsOutsideInputs": ["shared/beside.json"]}
    for mode in MODES:
        r, tasks, _ = runs[mode]
        assert r.returncode != 0, f"{mode}:\n{r.stdout}"
        assert tasks["app:build"]["findings"].get("refusedReads") == ["shared/beside.json"], f"{mode}: {tasks}"


# ---------------------------------------------------------------------------------------------------
# A project nested in a dependency, under ignoreReads' "^" globs


def nested_workspace(root: Path, ignore: str, reads: str) -> Path:
    check = {
        "command": f"mkdir -p packages/app/dist && cat {reads} > packages/app/dist/out.txt",
        "inputs": ["{projectRoot}/src/**/*"],
        "outputs": ["{projectRoot}/dist"],
        "cache": False,
        "qk:ultracache": {"ignoreReads": [ignore]},
    }
    projects = {
        "lib": {"root": "packages/lib", "targets": {"build": {"command": "true"}}},
        "lib-e2e": {"root": "packages/lib/e2e", "targets": {"e2e": {"command": "true"}}},
        "app": {"root": "packages/app", "depends": ["lib"], "targets": {"check": check}},
    }
    return make_workspace(root, projects, {
        "packages/app/src/main.txt": "main\n",
        "packages/lib/src/a.txt": "lib source\n",
        "packages/lib/docs/guide.md": "lib guide\n",
        "packages/lib/e2e/fixtures/secret.txt": "nested project's\n",
        ".gitignore": "dist\n",
    })


@pytest.mark.parametrize("ignore", ["^**", "^**/*.txt", "^e2e/**"])
def test_a_project_nested_in_a_dependency_is_not_reached_by_its_caret_globs(ignore, tmp_path):
    # lib-e2e lies in lib's directory and app does not depend on it: its files are its own, listed by the
    # audit and refused by enforce, whichever "^" glob would reach them from lib's root.
    ws = nested_workspace(tmp_path / "ws", ignore, "packages/lib/e2e/fixtures/secret.txt")
    runs = run_every_mode(ws, "check", tmp_path, ws / "packages/app/dist/out.txt")
    assert runs["plain"][0].returncode == 0, runs["plain"][0].stdout
    audit = runs["audit"][1]["app:check"]["findings"]
    assert audit == {"readsOutsideInputs": ["packages/lib/e2e/fixtures/secret.txt"]}, audit
    for mode in MODES:
        r, tasks, produced = runs[mode]
        assert r.returncode != 0, f"{mode}:\n{r.stdout}"
        assert tasks["app:check"]["findings"].get("refusedReads") == ["packages/lib/e2e/fixtures/secret.txt"], \
            f"{mode}: {tasks}"
        assert "nested project's" not in (produced or ""), mode


def test_the_dependencys_own_files_beside_the_nested_project_stay_readable(tmp_path):
    # What "^**" does reach, lib's files around the nested project, is read alike in every mode.
    ws = nested_workspace(tmp_path / "ws", "^**", "packages/lib/src/a.txt packages/lib/docs/guide.md"
                                                 " packages/lib/package.json")
    runs = run_every_mode(ws, "check", tmp_path, ws / "packages/app/dist/out.txt")
    outputs = {mode: produced for mode, (_, _, produced) in runs.items()}
    assert len(set(outputs.values())) == 1 and outputs["plain"].startswith("lib source\nlib guide\n"), outputs
    for mode, (r, tasks, _) in runs.items():
        assert r.returncode == 0, f"{mode}:\n{r.stdout}{r.stderr}"
        if tasks is not None:
            assert tasks["app:check"]["findings"] == {}, f"{mode}: {tasks}"
