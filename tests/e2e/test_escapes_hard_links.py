"""Escape suite, hard links (issue 38, item 8): `ln <undeclared workspace file> /tmp/h; cat /tmp/h` reads the
file through a name outside the workspace, where the audit judges no read. Both recorders see the link
(link, linkat), and the audit counts its source as a read of that file, judged by the rules as any read,
as it counts the symbolic link and the copy. Enforce refuses the link and lists the file as a read refused,
in both modes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import qk_harness as h
from audit_workspace import audit_text, sandbox
from enforce_workspace import MODES, SECRET, enforce, escape_workspace, outside_dist, snapshot, target

pytestmark = pytest.mark.privileged

# Each way of reaching other/secret.txt (undeclared) from a name outside the workspace, {out} that name.
WAYS = {
    "ln": "ln other/secret.txt {out} && cat {out}",  # linkat(2)
    "link(2)": f"{sys.executable} -c \"import os; os.link('other/secret.txt', '{{out}}')\" && cat {{out}}",
    # Through other/alias -> secret.txt, followed (linkat's AT_SYMLINK_FOLLOW): the file it leads to is linked.
    "ln -L": "ln -L other/alias {out} && cat {out}",
    "symbolic link": "ln -s $PWD/other/secret.txt {out} && cat {out}",
    "copy": "cp other/secret.txt {out} && cat {out}",
}


def audited(tmp_path: Path, recorder: str, command: str) -> tuple[str, dict]:
    out = tmp_path / "h"  # beside the workspace, on its filesystem (a hard link cannot cross one)
    command = command.format(out=out) + " > /dev/null && mkdir -p dist && cp src/main.txt dist/"
    ws = escape_workspace(tmp_path / "ws", {"t": target(command)})
    (ws / "other/alias").symlink_to("secret.txt")
    r, doc = sandbox(ws, "t", recorder, tmp_path / "report.json")
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout, doc["tasks"]["app:t"]


@pytest.mark.parametrize("recorder", h.RECORDERS)
@pytest.mark.parametrize("way", sorted(WAYS))
def test_reaching_an_undeclared_file_from_outside_the_workspace_is_a_read_of_it(recorder, way, tmp_path):
    stdout, task = audited(tmp_path, recorder, WAYS[way])
    assert task["status"] == "audited", task
    assert task["findings"].get("readsOutsideInputs") == ["other/secret.txt"], task
    assert "1 read outside its inputs:\n      other/secret.txt\n" in audit_text(stdout), stdout
    assert '"inputs": ["{projectRoot}/other/secret.txt"]' in audit_text(stdout), stdout
    # The process behind the finding is named, as any read's is: the link's maker for a link.
    maker = {"ln": "ln", "link(2)": "python3", "ln -L": "ln", "symbolic link": "cat", "copy": "cp"}[way]
    chain = task.get("processes", {}).get("other/secret.txt", [])
    assert chain and maker in chain[0], task


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_a_hard_link_to_a_declared_input_is_no_finding(recorder, tmp_path):
    stdout, task = audited(tmp_path, recorder, "ln src/main.txt {out} && cat {out}")
    assert task["findings"] == {}, task
    assert "kept to what it declares" in stdout, stdout


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", ["in the outputs", "outside the workspace"])
def test_a_hard_link_made_to_read_is_refused_and_listed_as_a_refused_read(mode, where, tmp_path):
    # Over the overlay the file is an unreadable stand-in (the read mask), which the overlay cannot copy up
    # to link (EOVERFLOW), and a link out of the overlay's mount crosses file systems (EXDEV); under Landlock
    # alone a link across its rules is refused (EXDEV). Either way the task sees nothing of the file, and
    # the summary lists it as a read refused (never as a write to declare).
    out = "dist/h" if where == "in the outputs" else str(tmp_path / "h")
    ws = escape_workspace(tmp_path / "ws", {"t": target(f"mkdir -p dist && ln other/secret.txt {out}; cat {out}")})
    before = outside_dist(snapshot(ws))
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    task = doc["tasks"]["app:t"]
    assert r.returncode != 0, r.stdout + r.stderr
    assert SECRET not in r.stdout + r.stderr, r.stdout
    assert not (ws / out).exists()
    assert task["status"] == "enforced", task
    assert outside_dist(snapshot(ws)) == before
    assert "other/secret.txt" not in task["findings"].get("refusedWrites", []), task
    assert "other/secret.txt" in task["findings"].get("refusedReads", []), task
    assert "other/secret.txt" in r.stdout[r.stdout.find("Sandbox enforce:"):], r.stdout
