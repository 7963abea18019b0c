"""--sandbox=enforce over a read mask: a file a task creates during its run is its own to read back,
wherever it lies (vite's config.timestamp file beside its config, vitest's coverage/.tmp in an output it
cleared, an output it did not declare), while what existed before it and is not declared stays out of
reach, and a refusal is named however the tool came to it (an open, or a stat before the open)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from audit_workspace import make_workspace, qk
from enforce_workspace import MODES, SECRET, enforce, escape_workspace, snapshot, outside_dist, target

pytestmark = pytest.mark.privileged

MODE = pytest.mark.parametrize("mode", MODES)


def test_a_file_made_beside_the_inputs_is_read_back_and_leaves_nothing(tmp_path):
    # vite 5 bundles vite.config.ts to vite.config.ts.timestamp-<ms>-<hash>.mjs beside it, imports it
    # and removes it.
    command = ("mkdir -p dist && echo 'export default 1' > vite.config.ts.timestamp-1796405520738-3f2a.mjs && "
               "cat vite.config.ts.timestamp-1796405520738-3f2a.mjs > dist/out.txt && "
               "rm vite.config.ts.timestamp-1796405520738-3f2a.mjs")
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)}, {"vite.config.ts": "export default {}\n"})
    before = outside_dist(snapshot(ws))
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/out.txt").read_text() == "export default 1\n"
    assert outside_dist(snapshot(ws)) == before
    assert doc["tasks"]["app:t"]["findings"] == {}, doc


@MODE
def test_an_output_cleared_and_made_again_is_read_back(mode, tmp_path):
    # vitest --coverage: clears coverage, makes coverage/.tmp, writes coverage-0.json there, reads it back.
    command = ("rm -rf coverage/* && mkdir -p coverage/.tmp && echo '{\"n\": 1}' > coverage/.tmp/coverage-0.json && "
               "cat coverage/.tmp/coverage-0.json > coverage/summary.json && rm -rf coverage/.tmp")
    t = target(command, outputs=["{projectRoot}/coverage"])
    ws = escape_workspace(tmp_path / "ws", {"t": t}, {"coverage/old.json": "old\n"})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(os.listdir(ws / "coverage")) == ["summary.json"]
    assert doc["tasks"]["app:t"]["findings"] == {}, doc


def test_an_output_removed_whole_and_made_again_is_read_back(tmp_path):
    # The same with `rm -rf coverage` (the directory itself): over the overlay the new directory's
    # files are the task's own. (Held by Landlock alone an output directory cannot be removed itself.)
    command = ("rm -rf coverage && mkdir -p coverage/.tmp && echo 1 > coverage/.tmp/c.json && "
               "cat coverage/.tmp/c.json > coverage/summary.txt")
    t = target(command, outputs=["{projectRoot}/coverage"])
    ws = escape_workspace(tmp_path / "ws", {"t": t}, {"coverage/old.json": "old\n"})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "coverage/summary.txt").read_text() == "1\n"
    assert not (ws / "coverage/old.json").exists()


def test_an_undeclared_output_is_read_back_and_not_kept(tmp_path):
    command = ("mkdir -p lib/cjs dist && echo 'module.exports = 1' > lib/cjs/index.cjs && "
               "cat lib/cjs/index.cjs > dist/copy.cjs")
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/copy.cjs").read_text() == "module.exports = 1\n"
    assert not (ws / "lib").exists()
    assert doc["tasks"]["app:t"]["findings"] == {"discardedWrites": ["lib"]}, doc


@pytest.mark.parametrize("how", ["cat other/secret.txt", "cat notes.txt", "node other/secret.txt",
                                 "test -r other/secret.txt"])
def test_what_existed_and_is_not_declared_stays_refused_and_is_named(how, tmp_path):
    # An open, a file beside the inputs and one in a directory of which nothing is declared, node running
    # it, a check of the right to read before the open: each fails the task and is named.
    ws = escape_workspace(tmp_path / "ws", {"t": target(f"mkdir -p dist && {how} > dist/leak.txt")},
                          {"notes.txt": SECRET + "\n"})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode != 0, r.stdout + r.stderr
    assert SECRET not in (ws / "dist/leak.txt").read_text() if (ws / "dist/leak.txt").exists() else True
    path = "notes.txt" if "notes" in how else "other/secret.txt"
    task = doc["tasks"]["app:t"]
    assert task["findings"].get("refusedReads") == [path], task
    summary = r.stdout[r.stdout.index("Sandbox enforce:"):]
    assert f"  app:t (failed)\n    1 read refused; declare it as an input:\n      {path}\n" in summary, summary


@pytest.mark.parametrize("how", ["test -f other/secret.txt", "node -e \"require('fs').statSync('other/secret.txt')\"",
                                 "ls -l other"])
def test_a_look_at_what_is_not_declared_answers_as_without_the_sandbox(how, tmp_path):
    # stat and a listing read nothing: the file is there, as in the workspace, and nothing is refused.
    ws = escape_workspace(tmp_path / "ws", {"t": target(f"mkdir -p dist && {how} > dist/look.txt")})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert SECRET not in (ws / "dist/look.txt").read_text()
    assert doc["tasks"]["app:t"]["findings"] == {}, doc


def test_directories_list_what_they_hold(tmp_path):
    # The spec lets a task list any directory: it lists what the workspace holds there, what the task may
    # read or not, and what it makes there.
    command = ("mkdir -p dist && ls -a . > dist/root.txt && ls -a other > dist/other.txt && touch made.txt && "
               "ls > dist/after.txt")
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)}, {"notes.txt": "n\n"})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    root = (ws / "dist/root.txt").read_text().split()
    assert {"src", "other", "dist", "notes.txt"} <= set(root), root
    assert (ws / "dist/other.txt").read_text().split() == [".", "..", "secret.txt"]
    assert "made.txt" in (ws / "dist/after.txt").read_text().split()
    assert doc["tasks"]["app:t"]["findings"] == {"discardedWrites": ["made.txt"]}, doc


def test_an_output_another_task_writes_meanwhile_stays_out_of_view(tmp_path):
    # `writer` makes gen/ at the workspace root (its output) while `reader`, which runs beside it and
    # may not read gen/, waits for it: the mask keeps what appears there out of reader's view.
    gate = tmp_path / "gate"
    gate.mkdir()
    targets = {
        "writer": {"command": f"mkdir -p gen && echo {SECRET} > gen/out.txt && touch {gate}/written",
                   "inputs": ["{projectRoot}/src"], "outputs": ["{projectRoot}/gen"], "cache": False},
        "reader": target(f"mkdir -p dist; while [ ! -e {gate}/applied ]; do sleep 0.05; done; "
                         "cat gen/out.txt > dist/leak.txt"),
    }
    ws = escape_workspace(tmp_path / "ws", targets)

    def open_gate():
        # writer's output lands in the workspace when it ends: wait for it there, then let reader go.
        for _ in range(1200):
            if (ws / "gen/out.txt").exists():
                break
            threading.Event().wait(0.05)
        (gate / "applied").touch()

    opener = threading.Thread(target=open_gate)
    opener.start()
    r, doc = enforce(ws, "writer,reader", tmp_path / "r.json", "--parallel", "2")
    opener.join()
    assert (ws / "gen/out.txt").read_text().strip() == SECRET
    assert r.returncode != 0, r.stdout + r.stderr
    assert not (ws / "dist/leak.txt").exists() or SECRET not in (ws / "dist/leak.txt").read_text()
    assert doc["tasks"]["app:reader"]["findings"].get("refusedReads") == ["gen/out.txt"], doc


def test_landlock_alone_names_what_it_cannot_allow_of_the_outputs(tmp_path):
    # Held by Landlock alone, removing an output directory itself (vitest's `rm -rf coverage`) and
    # creating a file output that was not there as the task started are refused: the task fails, and
    # the report names the path instead of saying the task kept to its declarations.
    targets = {
        "cov": target("rm -rf coverage && mkdir coverage && echo 1 > coverage/c.json",
                      outputs=["{projectRoot}/coverage"]),
        "file": target("echo 1 > out/report.txt", outputs=["{projectRoot}/out/report.txt"]),
    }
    ws = escape_workspace(tmp_path / "ws", targets, {"coverage/old.json": "old\n", "out/.keep": ""})
    r, doc = enforce(ws, "cov,file", tmp_path / "r.json", "--parallel", "1", mode="landlock")
    assert r.returncode != 0, r.stdout + r.stderr
    assert doc["tasks"]["app:cov"]["findings"].get("refusedWrites") == ["coverage"], doc
    assert doc["tasks"]["app:file"]["findings"].get("refusedWrites") == ["out/report.txt"], doc
    assert "kept to what" not in r.stdout[r.stdout.index("Sandbox enforce:"):], r.stdout
