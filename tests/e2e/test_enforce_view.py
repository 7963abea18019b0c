"""--sandbox=enforce is faithful (issue 37): the task sees the workspace as it is (every name listed,
stat answering with each file's size and times), a read the rules refuse fails with Permission denied,
every refusal is listed whether the task fails or goes on, a task refused anything is never cached, and
nothing qk makes before a task changes what its own commands do with its outputs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from audit_workspace import qk
from enforce_workspace import MODES, SECRET, enforce, escape_workspace, mode_env, target

pytestmark = pytest.mark.privileged

MODE = pytest.mark.parametrize("mode", MODES)


def listing(command_out: str) -> list[str]:
    return sorted(line for line in command_out.splitlines() if line)


def plain(ws: Path, targets: str) -> subprocess.CompletedProcess:
    return qk(ws, "run-many", "-t", targets, "--skip-cache")


@MODE
def test_a_directory_lists_what_it_holds_and_stat_answers_as_without_the_sandbox(mode, tmp_path):
    # The task writes what it sees: the names at the root and in other/ (which it may read nothing of),
    # and each file's size and modification time. Without the sandbox and under enforce: the same.
    command = ("mkdir -p dist && ls -A . other > dist/names.txt && "
               "stat -c '%n %s %Y' other/secret.txt src/main.txt > dist/stat.txt")
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    os.utime(ws / "other/secret.txt", (1_000_000_000, 1_000_000_000))
    r = plain(ws, "t")
    assert r.returncode == 0, r.stdout + r.stderr
    without = {f: (ws / "dist" / f).read_text() for f in ("names.txt", "stat.txt")}
    assert "secret.txt" in without["names.txt"] and "other/secret.txt 19 1000000000" in without["stat.txt"]

    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert {f: (ws / "dist" / f).read_text() for f in ("names.txt", "stat.txt")} == without
    assert doc["tasks"]["app:t"]["findings"] == {}, doc


@MODE
def test_a_refused_read_is_permission_denied_and_a_task_that_goes_on_is_listed_and_not_cached(mode, tmp_path):
    # A tool tolerating a read it cannot make (cat x 2>/dev/null || fallback): it succeeds, but what it
    # was refused is named from the kernel's answer, it is not "kept to what it declares", and its
    # result, which may differ from a run without the sandbox, is not cached.
    command = ("mkdir -p dist && (cat other/secret.txt 2>dist/err.txt || echo fallback) > dist/out.txt")
    t = target(command)
    t["cache"] = True
    ws = escape_workspace(tmp_path / "ws", {"t": t})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/out.txt").read_text() == "fallback\n"
    assert "Permission denied" in (ws / "dist/err.txt").read_text()
    task = doc["tasks"]["app:t"]
    assert task["findings"].get("refusedReads") == ["other/secret.txt"], task
    assert doc["summary"]["wentBeyond"] == 1, doc
    assert "the result was not cached: the sandbox refused it" in r.stdout, r.stdout
    # Nothing was stored: a plain run runs it again (and reads the secret), rather than restoring.
    again = qk(ws, "run-many", "-t", "t")
    assert again.returncode == 0 and "restored from the cache" not in again.stdout, again.stdout
    assert (ws / "dist/out.txt").read_text() == SECRET + "\n"


def test_a_check_before_the_open_is_listed_as_refused(tmp_path):
    # test -r asks access(R_OK), which a stand-in answers with EACCES: the tool takes its other branch
    # without opening anything, and that look is what names the refusal. (Landlock alone does not check
    # access(), so there test -r says yes and the cat after it is refused: test_a_refused_read_...)
    command = "mkdir -p dist && if test -r other/secret.txt; then echo yes; else echo no; fi > dist/out.txt"
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["tasks"]["app:t"]["findings"].get("refusedReads") == ["other/secret.txt"], doc


def test_a_stand_in_cannot_be_made_readable(tmp_path):
    # A hostile task with root's capabilities in its namespace: the stand-in's owner is an id that
    # namespace does not map, so neither chmod, chown, nor CAP_DAC_OVERRIDE reaches it.
    command = ("mkdir -p dist && stat -c '%a %u' other/secret.txt > dist/mode.txt; "
               "chmod 644 other/secret.txt 2>>dist/err.txt; chown 0 other/secret.txt 2>>dist/err.txt; "
               "cat other/secret.txt > dist/leak.txt 2>>dist/err.txt; true")
    t = target(command)
    ws = escape_workspace(tmp_path / "ws", {"t": t})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/mode.txt").read_text() == "0 65534\n"
    assert SECRET not in (ws / "dist/leak.txt").read_text()
    errors = (ws / "dist/err.txt").read_text()
    assert errors.count("Operation not permitted") == 2 and "Permission denied" in errors, errors
    assert "other/secret.txt" in doc["tasks"]["app:t"]["findings"].get("refusedReads", []), doc


@pytest.mark.parametrize("how", ["mv", "cp", "rename"])
def test_a_task_making_its_output_by_rename_or_copy_gives_the_tree_it_gives_without_the_sandbox(how, tmp_path):
    # Over the overlay qk makes no output before the task: `mv out.tmp out` gives out/, not out/out.tmp/.
    commands = {
        "mv": "mkdir out.tmp && echo a > out.tmp/a.txt && mv out.tmp out",
        "cp": "cp -r src out",
        "rename": "mkdir out.tmp && echo a > out.tmp/a.txt && "
                  "node -e \"require('fs').renameSync('out.tmp', 'out')\"",
    }
    t = target(commands[how], outputs=["{projectRoot}/out"])
    ws = escape_workspace(tmp_path / "ws", {"t": t})
    r = plain(ws, "t")
    assert r.returncode == 0, r.stdout + r.stderr
    without = sorted(str(p.relative_to(ws)) for p in (ws / "out").rglob("*"))
    subprocess.run(["rm", "-rf", str(ws / "out")], check=True)
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(str(p.relative_to(ws)) for p in (ws / "out").rglob("*")) == without
    findings = doc["tasks"]["app:t"]["findings"]
    # The temporary directory beside the output is a write outside it (the audit lists it too), not kept.
    assert set(findings) <= {"discardedWrites"}, findings
    assert not (ws / "out.tmp").exists()


def test_under_landlock_alone_an_output_qk_made_keeps_the_result_out_of_the_cache(tmp_path):
    # Landlock alone must make a missing output directory for its rules to allow it; cp -r then copies
    # into it, as it would not without the sandbox. The run says so and caches nothing.
    t = target("cp -r src out", outputs=["{projectRoot}/out"])
    t["cache"] = True
    ws = escape_workspace(tmp_path / "ws", {"t": t})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode="landlock")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "out/src/main.txt").exists()
    assert "qk made its output out as a directory before it ran (held by Landlock alone)" in r.stdout, r.stdout
    assert "  not cached, as qk made an output directory before it ran (a tool renaming or copying into it leaves " \
           "another tree): app:t\n" in r.stdout, r.stdout
    assert "qk made its output out" in doc["tasks"]["app:t"]["reason"], doc
    assert "so its result is not cached" in r.stdout, r.stdout


def test_an_optional_output_the_task_never_writes_is_no_finding(tmp_path):
    t = target("mkdir -p dist && echo x > dist/x.txt", outputs=["{projectRoot}/dist", "{projectRoot}/reports"])
    ws = escape_workspace(tmp_path / "ws", {"t": t})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["tasks"]["app:t"]["findings"] == {}, doc
    assert not (ws / "reports").exists()


def test_a_packer_of_its_project_is_refused_what_the_audit_lists(tmp_path):
    # tar of the project directory: the audit lists README.md read outside the inputs; enforce refuses
    # the same read by name (the archive is not made without it, silently), and caches nothing.
    t = target("mkdir -p dist && tar --exclude=./dist --exclude=./.qk -cf dist/p.tar src README.md",
               inputs=["{projectRoot}/src"])
    t["cache"] = True
    ws = escape_workspace(tmp_path / "ws", {"t": t}, {"README.md": "readme\n"})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert doc["tasks"]["app:t"]["findings"].get("refusedReads") == ["README.md"], doc
    assert "the result was not cached" in r.stdout or r.returncode != 0, r.stdout
    audit = qk(ws, "run-many", "-t", "t", "--sandbox", "--skip-cache", "--sandbox-report", str(tmp_path / "a.json"))
    assert audit.returncode == 0, audit.stdout + audit.stderr
    adoc = json.loads((tmp_path / "a.json").read_text())
    assert "README.md" in adoc["tasks"]["app:t"]["findings"].get("readsOutsideInputs", []), adoc


def test_a_workspace_directory_named_as_the_runs_mirror_neither_refuses_tasks_nor_leaks(tmp_path):
    # The run's mirror lives under one name in its layer; a directory of that name in the workspace (a
    # hostile task's output, say) must not make every task's sandbox fail, nor show its files where a
    # refused directory's names should be.
    command = "mkdir -p dist && ls other > dist/ls.txt && (cat other/planted.txt > dist/leak.txt 2>&1 || true)"
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)},
                          {"__qk_read_mask_mirror/other/planted.txt": "PLANTED\n"})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["tasks"]["app:t"]["status"] == "enforced", doc
    assert (ws / "dist/ls.txt").read_text().split() == ["secret.txt"]
    assert "PLANTED" not in (ws / "dist/leak.txt").read_text()
