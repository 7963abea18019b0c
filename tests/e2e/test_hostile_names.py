"""Files named with terminal escapes (issue 25): everything qk prints as text shows them escaped, never
played (no ESC, no carriage return, no byte that is not UTF-8 reaches the terminal), and the JSON keeps
the names exactly, but for a byte that is not UTF-8, which JSON cannot hold (U+FFFD in its place)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import qk_harness as h
import sandbox_report
from audit_workspace import QK, make_workspace
from enforce_workspace import MODES, mode_env

RECORDERS = pytest.mark.parametrize("recorder", h.RECORDERS)

# name -> how the summary shows it, and how a suggestion's JSON-looking quotes show it.
HOSTILE = {
    b"\x1b]0;pwned\x07title.txt": (rb"\x1b]0;pwned\x07title.txt", rb"\u001b]0;pwned\u0007title.txt"),
    b"\x1b[8mhidden.txt": (rb"\x1b[8mhidden.txt", rb"\u001b[8mhidden.txt"),
    b"\x1b[2Kerase.txt": (rb"\x1b[2Kerase.txt", rb"\u001b[2Kerase.txt"),
    b"back\x08space.txt": (rb"back\x08space.txt", rb"back\bspace.txt"),
    b"bad\xff.txt": (rb"bad\xff.txt", rb"bad\xff.txt"),
    b"cr\rover.txt": (rb"cr\rover.txt", rb"cr\rover.txt"),
    b"back\\slash.txt": (rb"back\\slash.txt", rb"back\\slash.txt"),
}
# Valid UTF-8 is shown as it is.
KEPT = "café-日本.txt".encode()
# What must never reach the terminal raw.
RAW = (b"\x1b", b"\r", b"\x07", b"\x08", b"\xff")

# Reads each file named in src/names from data/ (outside its inputs) and writes one by the same name in
# out/ (outside its outputs). The names come from a declared input: under enforce data/ cannot be listed.
# Silent: what a command prints is its own and passed through as written (a refusal quoting the name).
TOOL = 'while IFS= read -r n; do cat "data/$n" > /dev/null; echo x > "out/$n"; done < src/names 2>/dev/null\n'


def hostile_workspace(root: Path, inputs: list[str] | None = None) -> Path:
    build = {"command": "sh src/tool.sh", "inputs": inputs or ["{projectRoot}/src/**"],
             "outputs": ["{projectRoot}/dist"], "cache": False}
    ws = make_workspace(root, {"app": {"root": ".", "targets": {"build": build}}},
                        {"src/main.txt": "main\n", "src/tool.sh": TOOL, ".gitignore": "dist\n"})
    for d in (b"data", b"out"):
        os.makedirs(os.fsencode(ws) + b"/" + d, exist_ok=True)
    for name in [*HOSTILE, KEPT]:
        with open(os.fsencode(ws) + b"/data/" + name, "wb") as f:
            f.write(b"x\n")
    with open(ws / "src" / "names", "wb") as f:
        f.write(b"".join(n + b"\n" for n in [*HOSTILE, KEPT]))
    return ws


def run(argv: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """The command's output as bytes: what a terminal would be sent."""
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(argv, cwd=cwd, capture_output=True, timeout=180, env=e)


def assert_nothing_raw(out: bytes) -> None:
    for raw in RAW:
        assert raw not in out, f"{raw!r} reached the terminal:\n{out!r}"
    out.decode("utf-8")  # all of it valid UTF-8


def json_name(name: bytes) -> str:
    """What the JSON can hold of a name: the bytes that are not UTF-8 as U+FFFD, one each."""
    return name.decode("utf-8", errors="replace")


@RECORDERS
def test_the_audit_summary_and_suggestions_show_hostile_names_escaped(recorder, tmp_path):
    ws = hostile_workspace(tmp_path / "ws")
    report = tmp_path / "report.json"
    r = run([str(QK), "run-many", "-t", "build", "--sandbox", "--sandbox-report", str(report)], ws,
            {"QK_RECORDER": recorder})
    assert r.returncode == 0, r.stdout + r.stderr
    assert_nothing_raw(r.stdout)
    assert_nothing_raw(r.stderr)
    summary = r.stdout[r.stdout.index(b"Sandbox audit:"):]
    for name, (text, _) in HOSTILE.items():
        assert b"      data/" + text + b"\n" in summary, (name, summary.decode())
        assert b"      out/" + text + b"\n" in summary, (name, summary.decode())
    assert b"      data/" + KEPT + b"\n" in summary
    # The suggestions show their first four values, sorted by their bytes: the three ESC names and the
    # backspace, in JSON's escapes, so that the line pastes into project.json as the same names.
    lines = summary.decode().splitlines()
    inputs = next(line for line in lines if line.strip().startswith('"inputs": ['))
    outputs = next(line for line in lines if line.strip().startswith('"outputs": ['))
    shown = sorted(HOSTILE)[:4]
    assert shown[0].startswith(b"\x1b") and shown[3].startswith(b"back\x08")
    for name in shown:
        quoted = HOSTILE[name][1].decode()
        assert f'"{{projectRoot}}/data/{quoted}"' in inputs, inputs
        assert f'"{{projectRoot}}/out/{quoted}"' in outputs, outputs
    # Those values parse as JSON to the names themselves.
    fragment = inputs.strip()
    values = json.loads(fragment[len('"inputs": '):fragment.index(", …")] + "]")
    assert values == [f"{{projectRoot}}/data/{json_name(n)}" for n in shown]

    # The report keeps the names exactly; the byte that is not UTF-8 as U+FFFD.
    doc = sandbox_report.checked(json.loads(report.read_text(encoding="utf-8")))
    findings = doc["tasks"]["app:build"]["findings"]
    data = sorted(f"data/{json_name(n)}" for n in [*HOSTILE, KEPT])
    assert sorted(p for p in findings["readsOutsideInputs"] if p.startswith("data/")) == data
    assert sorted(p for p in findings["strayWrites"] if p.startswith("out/")) == sorted(
        f"out/{json_name(n)}" for n in [*HOSTILE, KEPT])
    assert "data/bad\ufffd.txt" in findings["readsOutsideInputs"]


@pytest.mark.privileged
@pytest.mark.parametrize("mode", MODES)
def test_the_enforce_summary_shows_hostile_names_escaped(mode, tmp_path):
    ws = hostile_workspace(tmp_path / "ws")
    report = tmp_path / "report.json"
    r = run([str(QK), "run-many", "-t", "build", "--sandbox=enforce", "--sandbox-report", str(report)], ws,
            mode_env(mode))
    assert_nothing_raw(r.stdout)
    assert_nothing_raw(r.stderr)
    summary = r.stdout[r.stdout.index(b"Sandbox enforce:"):]
    doc = sandbox_report.checked(json.loads(report.read_text(encoding="utf-8")))
    findings = doc["tasks"]["app:build"]["findings"]
    # Whatever enforce refused or did not keep of them is listed, escaped, and exact in the report.
    listed = [p for kind in ("refusedReads", "refusedWrites", "discardedWrites") for p in findings.get(kind, [])]
    assert any(p.startswith("out/") for p in listed), (findings, summary.decode())
    for name, (text, _) in HOSTILE.items():
        for where in ("data/", "out/"):
            if where + json_name(name) in listed:
                assert b"      " + where.encode() + text + b"\n" in summary, (name, summary.decode())


def test_qk_show_task_shows_the_files_of_its_key_escaped(tmp_path):
    ws = hostile_workspace(tmp_path / "ws", inputs=["{projectRoot}/data/**"])
    r = run([str(QK), "show", "task", "app:build"], ws)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_nothing_raw(r.stdout)
    assert_nothing_raw(r.stderr)
    for name, (text, _) in HOSTILE.items():
        assert b"  data/" + text + b"\n" in r.stdout, (name, r.stdout.decode())
    assert b"  data/" + KEPT + b"\n" in r.stdout

    r = run([str(QK), "show", "task", "app:build", "--json"], ws)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    files = sorted(f["path"] for g in doc["inputs"] for f in g["files"])
    assert files == sorted(f"data/{json_name(n)}" for n in [*HOSTILE, KEPT])


def test_a_project_named_with_escapes_is_shown_escaped_in_labels_and_show(tmp_path):
    # A project's name and its commands come from the workspace too: JSON writes ESC as \u001b.
    targets = {"build": {"command": "echo built", "cache": False}}
    ws = make_workspace(tmp_path / "ws", {"evil\x1b[8m": {"root": "pkgs/evil", "targets": targets},
                                          "ok": {"root": "pkgs/ok", "targets": {
                                              "build": {"command": "echo '\x1b]0;pwned\x07'", "cache": False}}}})
    r = run([str(QK), "show", "projects"], ws)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [rb"evil\x1b[8m", b"ok"]
    r = run([str(QK), "show", "project", "ok"], ws)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_nothing_raw(r.stdout)
    assert rb"$ echo '\x1b]0;pwned\x07'" in r.stdout
    r = run([str(QK), "show", "projects", "--json"], ws)
    assert json.loads(r.stdout) == ["evil\x1b[8m", "ok"]

    r = run([str(QK), "run-many", "-t", "build", "--exclude", "ok"], ws)  # ok's echo is its own output
    assert r.returncode == 0, r.stdout + r.stderr
    assert_nothing_raw(r.stdout)
    assert rb"evil\x1b[8m:build | built" in r.stdout


@RECORDERS
def test_qk_trace_shows_a_hostile_command_name_escaped(recorder, tmp_path):
    ws = hostile_workspace(tmp_path / "ws")
    script = os.fsencode(ws) + b"/\x1b[2Krun\r.sh"
    with open(script, "wb") as f:
        f.write(b"#!/bin/sh\nexec sh src/tool.sh\n")
    os.chmod(script, 0o755)
    out = tmp_path / "trace.json"
    r = run([str(h.QK_TRACE), "--recorder", recorder, "--json", str(out), "--", b"./\x1b[2Krun\r.sh"], ws)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_nothing_raw(r.stderr)
    assert rb"qk-trace: ./\x1b[2Krun\r.sh (exit 0" in r.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    read = doc["files"]["read"]
    for name in [*HOSTILE, KEPT]:
        assert any(p.endswith("/data/" + json_name(name)) or p == "data/" + json_name(name) for p in read), name
