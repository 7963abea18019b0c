"""Two traced commands running at the same time, in cgroups of their own, each see only their own
files and processes; an untraced command running beside them is seen by neither."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import qk_harness as h

COUNT = 30  # files each command creates, one every PAUSE_MS: about 1.5 s of activity each
PAUSE_MS = 50


def _start_traced(recorder, program, root: Path, json_path: Path):
    argv = [str(h.QK_TRACE), "--recorder", recorder, "--json", str(json_path), "-C", str(root), "--"]
    argv += [str(program), str(root), str(COUNT), str(PAUSE_MS)]
    return argv, subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_concurrent_commands_see_only_their_own_files(recorder, qk_trace, scenario_path, tmp_path):
    base = Path(os.path.realpath(tmp_path))
    roots = {name: base / name for name in ("a", "b", "untraced")}
    for r in roots.values():
        r.mkdir()
    program = scenario_path("churn")

    untraced = subprocess.Popen([str(program), str(roots["untraced"]), str(COUNT), str(PAUSE_MS)])
    started = {name: _start_traced(recorder, program, roots[name], base / f"{name}.json") for name in ("a", "b")}
    start = time.monotonic()
    results = {}
    for name, (argv, proc) in started.items():
        out, err = proc.communicate(timeout=300)
        results[name] = (argv, proc.returncode, out, err)
    assert untraced.wait(timeout=300) == 0
    elapsed = time.monotonic() - start

    docs = {}
    for name, (argv, rc, out, err) in results.items():
        assert rc == 0, f"$ {' '.join(argv)}\n-> {rc}\n{err}"
        doc = json.loads((base / f"{name}.json").read_text())
        problems = h.schema_errors(doc) + h.contract_errors(doc)
        assert not problems, problems
        docs[name] = doc
    # The three ran side by side (each alone takes COUNT * PAUSE_MS = 1.5 s).
    assert elapsed < 3 * COUNT * PAUSE_MS / 1000 + 20

    expected = h.normalise_expected(
        {k: {f"f{i}.txt" for i in range(COUNT)} for k in ("created", "written", "read")}
    )
    for name in ("a", "b"):
        doc = docs[name]
        problems = h.diff_files(h.files_under(doc, str(roots[name])), expected)
        assert not problems, f"command {name}: " + "; ".join(problems)
        assert doc["complete"] is True, doc["incompleteReasons"]
        # Nothing of the other commands' directories, in any list.
        others = [str(roots[o]) for o in roots if o != name]
        every_path = [p for k in h.FILE_KEYS for p in doc["files"][k]]
        every_path += [p for r in doc["files"]["renamed"] for p in (r["from"], r["to"])]
        leaked = sorted(p for p in every_path if any(h.under(p, o) for o in others))
        assert not leaked, f"command {name} recorded another command's files: {leaked[:10]}"
        # Its processes are its own: one churn process.
        assert [p["argv"] for p in doc["processes"]] == [[str(program), str(roots[name]), str(COUNT), str(PAUSE_MS)]]

    pids_a = {p["pid"] for p in docs["a"]["processes"]}
    pids_b = {p["pid"] for p in docs["b"]["processes"]}
    assert not pids_a & pids_b and untraced.pid not in pids_a | pids_b
