"""qk run-many and qk run on tests/fixtures/workspaces/runner: dependency order, output prefixes, the
cache (hit after a no-op, miss after an edit, hit after reverting it, restored outputs byte-identical),
failed tasks' dependents skipped, --dry-run, and errors before anything runs. No privileges needed."""

from __future__ import annotations

import json
import os
import signal
import time
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import qk_harness as h

QK = h.BUILD_DIR / "qk"
FIXTURES = h.SOURCE_DIR / "tests" / "fixtures" / "workspaces"


def qk(ws: Path, *args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([str(QK), *args], cwd=ws, capture_output=True, text=True, timeout=timeout, env=e)


@pytest.fixture
def runner(tmp_path: Path) -> Path:
    ws = tmp_path / "runner"
    shutil.copytree(FIXTURES / "runner", ws)
    return ws


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under root: contents and mode."""
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mode)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_runs_in_dependency_order_with_prefixed_output(runner: Path):
    r = qk(runner, "run-many", "-t", "build", "-p", "app")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    lib = next(i for i, l in enumerate(lines) if re.match(r"^lib:build\s+\| built lib$", l))
    app = next(i for i, l in enumerate(lines) if re.match(r"^app:build\s+\| built app$", l))
    assert lib < app, r.stdout
    # stderr of a task is part of its output, prefixed the same way.
    assert any(re.match(r"^app:build\s+\| app warning$", l) for l in lines), r.stdout
    assert (runner / "packages/app/dist/app.txt").read_text() == "lib source\napp source\n"
    assert "Successfully ran target build for 1 project and 1 task they depend on" in r.stdout


def test_cache_hit_after_noop_miss_after_edit_hit_after_revert(runner: Path):
    first = qk(runner, "run-many", "-t", "build", "-p", "lib,app")
    assert first.returncode == 0, first.stdout + first.stderr
    built = tree(runner / "packages/app/dist") | tree(runner / "packages/lib/dist")

    second = qk(runner, "run-many", "-t", "build", "-p", "lib,app")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "2 restored from the cache" in second.stdout, second.stdout
    # A fully cached run is quiet: what a restored task printed is not replayed unless asked.
    assert not re.search(r"^lib:build\s+\| built lib$", second.stdout, re.M), second.stdout
    assert re.search(r"^lib:build\s+\| ✔ restored from the cache$", second.stdout, re.M), second.stdout
    # --output-style=stream (and static) replay it: the task's own output, prefixed, as Nx's do.
    for style in ("stream", "static"):
        replayed = qk(runner, "run-many", "-t", "build", "-p", "lib,app", "--output-style", style)
        assert "2 restored from the cache" in replayed.stdout, replayed.stdout
        assert re.search(r"^lib:build\s+\| built lib$", replayed.stdout, re.M), replayed.stdout
    dynamic = qk(runner, "run-many", "-t", "build", "-p", "lib,app", "--output-style=dynamic")
    assert "built lib" not in dynamic.stdout and "2 restored from the cache" in dynamic.stdout, dynamic.stdout
    bad = qk(runner, "run-many", "-t", "build", "--output-style", "tui")
    assert bad.returncode != 0 and "--output-style" in bad.stderr, bad.stderr

    # Restored outputs are byte-identical, with their modes, even after they were removed.
    shutil.rmtree(runner / "packages/app/dist")
    (runner / "packages/lib/dist/lib.txt").write_text("tampered")
    (runner / "packages/lib/dist/stale.txt").write_text("stale")
    third = qk(runner, "run-many", "-t", "build", "-p", "lib,app")
    assert "2 restored from the cache" in third.stdout, third.stdout
    assert tree(runner / "packages/app/dist") | tree(runner / "packages/lib/dist") == built

    # An edit to an input of lib misses for lib and for app, which depends on it.
    src = runner / "packages/lib/src/a.txt"
    src.write_text("lib source, edited\n")
    edited = qk(runner, "run-many", "-t", "build", "-p", "lib,app")
    assert edited.returncode == 0
    assert "restored from the cache" not in edited.stdout, edited.stdout
    assert (runner / "packages/app/dist/app.txt").read_text() == "lib source, edited\napp source\n"

    # A spec file is not in production: editing it changes nothing.
    (runner / "packages/lib/src/a.spec.txt").write_text("spec edited\n")
    assert "2 restored from the cache" in qk(runner, "run-many", "-t", "build", "-p", "lib,app").stdout

    # Reverting the edit hits the first entries again.
    src.write_text("lib source\n")
    reverted = qk(runner, "run-many", "-t", "build", "-p", "lib,app")
    assert "2 restored from the cache" in reverted.stdout, reverted.stdout
    assert (runner / "packages/app/dist/app.txt").read_text() == "lib source\napp source\n"


def test_skip_cache_runs_everything(runner: Path):
    assert qk(runner, "run-many", "-t", "build", "-p", "lib").returncode == 0
    r = qk(runner, "run-many", "-t", "build", "-p", "lib", "--skip-cache")
    assert r.returncode == 0
    assert "restored" not in r.stdout
    assert re.search(r"^lib:build\s+\| built lib$", r.stdout, re.M)


def test_failed_task_skips_its_dependents_not_the_others(runner: Path):
    r = qk(runner, "run-many", "-t", "build")
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"^broken:build\s+\| failing$", r.stdout, re.M)
    assert not (runner / "packages/after-broken/never.txt").exists()
    # The summary names the failure and the skipped dependent; the independent tasks ran.
    assert re.search(r"broken:build.*exit (status|code) 3", r.stdout), r.stdout
    assert re.search(r"after-broken:build.*broken:build", r.stdout), r.stdout
    assert (runner / "packages/app/dist/app.txt").exists()
    # A failed task is not cached.
    again = qk(runner, "run-many", "-t", "build", "-p", "broken")
    assert re.search(r"^broken:build\s+\| failing$", again.stdout, re.M)


def test_package_json_script_runs_with_pre_and_post(runner: Path):
    r = qk(runner, "run", "scripted:build")
    assert r.returncode == 0, r.stdout + r.stderr
    out = [l.split("|", 1)[1].strip() for l in r.stdout.splitlines() if l.startswith("scripted:build")]
    assert out[:3] == ["pre prebuild", "main build", "post postbuild"], r.stdout
    assert (runner / "packages/scripted/dist/out.txt").read_text() == "scripted@2.0.0\n"


def test_run_one_task_pulls_in_its_dependencies(runner: Path):
    r = qk(runner, "run", "app:test")
    assert r.returncode == 0, r.stdout + r.stderr
    for task in ("lib:build", "app:build", "app:test"):
        assert re.search(rf"^{task}\s+\|", r.stdout, re.M), r.stdout


def test_dry_run_prints_hashes_and_runs_nothing(runner: Path):
    r = qk(runner, "run-many", "-t", "build", "-p", "lib,app", "--dry-run")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert re.fullmatch(r"lib:build [0-9a-f]{32}", lines[0]), r.stdout
    assert re.fullmatch(r"app:build [0-9a-f]{32}", lines[1]), r.stdout
    assert not (runner / "packages/lib/dist").exists()
    # The hash is the one qk show task prints.
    shown = qk(runner, "show", "task", "lib:build", "--json")


    assert json.loads(shown.stdout)["hash"] == lines[0].split()[1]


@pytest.mark.parametrize(
    "edit, args, message",
    [
        (("nx.json", '{\n  "targetDefaults": {\n    "build": { "cache": tru }\n  }\n}\n'), ("-t", "build"),
         r"nx\.json:3:25: malformed JSON"),
        (None, ("-t", "build", "-p", "nope"), r"nope"),
        (None, ("-t", "nope"), r"nope"),
        (("packages/lib/project.json",
          '{"name": "lib", "targets": {"build": {"command": "true", "inputs": ["prod"]}}}'),
         ("-t", "build", "-p", "lib"), r'task lib:build: input "prod" is not defined'),
        (("packages/lib/project.json",
          '{"name": "lib", "targets": {"build": {"command": "true", "outputs": ["{projectRoot}/../../../x"]}}}'),
         ("-t", "build", "-p", "lib"), r"leads outside the workspace"),
        (("packages/lib/project.json",
          '{"name": "lib", "targets": {"build": {"command": "true", "dependsOn": ["other"]}, '
          '"other": {"command": "true", "dependsOn": ["build"]}}}'),
         ("-t", "build", "-p", "lib"), r"dependsOn forms a cycle: lib:build -> lib:other -> lib:build"),
        (("packages/lib/project.json",
          '{"name": "lib", "targets": {"build": {"executor": "@nx/js:tsc"}}}'),
         ("-t", "build", "-p", "lib"), r"lib:build.*@nx/js:tsc"),
    ],
    ids=["malformed-json", "unknown-project", "unknown-target", "unknown-named-input", "output-outside",
         "cycle", "unsupported-executor"],
)
def test_bad_input_is_a_clear_error_before_anything_runs(runner: Path, edit, args, message):
    if edit:
        (runner / edit[0]).write_text(edit[1])
    r = qk(runner, "run-many", *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert re.search(message, r.stderr), r.stderr
    assert r.stderr.startswith("qk: "), r.stderr
    assert not (runner / "packages/lib/dist").exists()
    assert not (runner / ".qk/cache").exists() or not any(
        p.name != "file-hashes" for p in (runner / ".qk/cache").iterdir()
    )


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_the_tasks_and_caches_nothing_half_done(runner: Path, sig, status):
    """A run interrupted while a task runs stops it, starts nothing more, keeps what finished, and leaves
    no cache entry for the task it stopped."""
    marker = runner / "started"
    (runner / "packages/app/project.json").write_text(
        '{"name": "app", "targets": {"build": {"command": "echo $$ > ' + str(marker) + '.tmp && mv ' + str(marker)
        + '.tmp ' + str(marker) + ' && exec sleep 60"}}}')
    proc = subprocess.Popen([str(QK), "run-many", "-t", "build", "-p", "app", "--parallel", "1"], cwd=runner,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():  # wait for the task's command to start (not a timing assumption)
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the task never started"
            time.sleep(0.02)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, out + err
    # lib:build finished first and is cached; app:build was stopped and is not.
    entries = [p for p in (runner / ".qk/cache").iterdir() if re.fullmatch(r"[0-9a-f]{32}", p.name)]
    metas = [json.loads((p / "meta.json").read_text())["task"] for p in entries]
    assert metas == ["lib:build"], metas
    assert not any((runner / ".qk/cache/tmp").iterdir())
    # No sleep is left behind: the command's process group was stopped.
    pid = int(marker.read_text())
    status_file = Path(f"/proc/{pid}/status")
    assert not status_file.exists() or "State:\tZ" in status_file.read_text(), f"the task's sleep {pid} survived"
    assert "interrupted" in out.lower(), out


def test_a_task_killed_by_a_signal_fails_and_says_so(runner: Path):
    (runner / "packages/lib/project.json").write_text(
        '{"name": "lib", "targets": {"build": {"command": "echo about to crash; kill -SEGV $$"}}}')
    r = qk(runner, "run-many", "-t", "build", "-p", "app")
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"^lib:build\s+\| about to crash$", r.stdout, re.M), r.stdout
    assert re.search(r"lib:build.*signal 11 \(SIGSEGV\)", r.stdout), r.stdout
    assert re.search(r"app:build.*lib:build", r.stdout), r.stdout  # skipped, naming the crashed task
    assert not (runner / "packages/app/dist").exists()


def test_a_command_that_does_not_exist_fails_its_task(runner: Path):
    (runner / "packages/lib/project.json").write_text(
        '{"name": "lib", "targets": {"build": {"command": "qk-no-such-tool --flag"}}}')
    r = qk(runner, "run-many", "-t", "build", "-p", "lib")
    assert r.returncode == 1
    assert re.search(r"^lib:build\s+\| .*qk-no-such-tool: (command )?not found", r.stdout, re.M), r.stdout
    assert re.search(r"lib:build.*exit code 127", r.stdout), r.stdout


def test_scratch_directories_are_emptied_before_the_task_runs(runner: Path, tmp_path: Path):
    (runner / "packages/lib/project.json").write_text(json.dumps({"name": "lib", "targets": {"build": {
        "command": "ls -A .tool-cache > seen.txt; echo state > .tool-cache/state",
        "options": {"cwd": "{projectRoot}"},
        "qk:sandbox": {"scratch": ["{projectRoot}/.tool-cache"]}}}}))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    cache_dir = runner / "packages/lib/.tool-cache"
    (cache_dir / "old").mkdir(parents=True)
    (cache_dir / "old/entry").write_text("stale")
    (cache_dir / "link").symlink_to(outside)
    r = qk(runner, "run-many", "-t", "build", "-p", "lib", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (runner / "packages/lib/seen.txt").read_text() == "", "the task saw what an earlier run left"
    assert (outside / "keep.txt").read_text() == "keep"  # the link was removed, not followed
    # Emptied again on the next run, whatever the task left.
    assert qk(runner, "run-many", "-t", "build", "-p", "lib", "--skip-cache").returncode == 0
    assert (runner / "packages/lib/seen.txt").read_text() == ""


def test_tasks_sharing_a_scratch_directory_fail_the_run_before_anything_starts(runner: Path):
    for name in ("lib", "app"):
        (runner / f"packages/{name}/project.json").write_text(json.dumps({"name": name, "targets": {"build": {
            "command": "touch ran.txt", "options": {"cwd": "{projectRoot}"},
            "qk:sandbox": {"scratch": ["{workspaceRoot}/tmp/shared" + ("/inner" if name == "app" else "")]}}}}))
    r = qk(runner, "run-many", "-t", "build", "-p", "lib,app")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "app:build" in r.stderr and "lib:build" in r.stderr and "tmp/shared" in r.stderr, r.stderr
    assert not (runner / "packages/lib/ran.txt").exists()
    # A scratch directory in node_modules is refused too.
    (runner / "packages/app/project.json").write_text(json.dumps({"name": "app", "targets": {"build": {
        "command": "true", "qk:sandbox": {"scratch": ["{projectRoot}/node_modules/.cache"]}}}}))
    r = qk(runner, "run-many", "-t", "build", "-p", "app", "--exclude-task-dependencies")
    assert r.returncode == 2 and "node_modules" in r.stderr, r.stderr


def test_output_styles_static_groups_each_task_dynamic_shows_failures_only(tmp_path: Path):
    from audit_workspace import make_workspace
    # Two tasks running at once, each printing between the other's lines.
    ws = make_workspace(tmp_path / "ws", {
        "a": {"root": "p/a", "targets": {"t": {"command": "echo a1; sleep 0.3; echo a2"}}},
        "b": {"root": "p/b", "targets": {"t": {"command": "sleep 0.1; echo b1; sleep 0.4; echo b2; exit 3"}}},
    })
    static = qk(ws, "run-many", "-t", "t", "--parallel", "2", "--output-style", "static")
    lines = [l for l in static.stdout.splitlines() if re.match(r"^[ab]:t \| [ab]\d$", l)]
    assert lines == ["a:t | a1", "a:t | a2", "b:t | b1", "b:t | b2"], static.stdout
    dynamic = qk(ws, "run-many", "-t", "t", "--parallel", "2", "--output-style", "dynamic")
    assert dynamic.returncode != 0
    assert "a1" not in dynamic.stdout and "a2" not in dynamic.stdout, dynamic.stdout
    assert "b:t | b1\nb:t | b2\nb:t | ✖ failed: exit code 3" in dynamic.stdout, dynamic.stdout
    assert re.search(r"^a:t \| ✔ done in", dynamic.stdout, re.M), dynamic.stdout


def test_options_commands_without_an_executor_run_as_nx_runs_them(tmp_path: Path):
    # Nx 22 (normalizeTargets) runs neither: a target with options.commands but no executor, command or
    # dependsOn is dropped; with dependsOn it is nx:noop. A package.json script of the same name makes it
    # nx:run-script. The success line names only targets that ran, as Nx's does ("build, chk").
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "nx.json").write_text("{}")
    (ws / "package.json").write_text('{"name": "root", "private": true}')
    (ws / "pnpm-workspace.yaml").write_text("packages:\n  - pkg\n")
    (ws / "pkg" / "package.json").write_text(json.dumps({
        "name": "pkg", "scripts": {"build": "echo script-build"},
        "nx": {"targets": {"build": {"options": {"commands": ["echo cmds-build"]}},
                           "lint": {"options": {"commands": ["echo cmds-lint > lint.txt"]}},
                           "chk": {"dependsOn": ["build"], "options": {"commands": ["echo cmds-chk > chk.txt"]}}}}}))
    r = qk(ws, "run-many", "-t", "build,lint,chk")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pkg:build | script-build" in r.stdout, r.stdout
    assert "cmds-" not in r.stdout and not (ws / "pkg" / "lint.txt").exists() and not (ws / "pkg" / "chk.txt").exists()
    assert "Successfully ran targets build, chk for 1 project" in r.stdout, r.stdout
    gone = qk(ws, "run-many", "-t", "lint")
    assert gone.returncode != 0 and "no project has a target named lint" in gone.stdout + gone.stderr
