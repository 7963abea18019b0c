"""Refusals that come from file modes rather than Landlock (tests/scenarios/denied.c covers Landlock): a
non-root user (setpriv) opening a file of mode 000 (EACCES) and opening another's file with O_NOATIME
(EPERM). qk-trace records both as `denied` under either recorder, and nothing else under the
directory; both engines record the same."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

import qk_harness as h

NOBODY = 65534
# As nobody: cat's open of zero.txt (mode 000) fails with EACCES; dd's O_NOATIME open of plain.txt,
# which nobody may read but does not own, fails with EPERM. Both commands fail; the script does not.
SCRIPT = "cat zero.txt; dd if=plain.txt iflag=noatime of=/dev/null status=none; exit 0"


def _record(recorder: str, base: Path):
    if shutil.which("setpriv") is None:
        h.skip_or_fail("setpriv (util-linux) is not installed")
    root = base / "ws"
    root.mkdir()
    root.chmod(0o755)  # nobody looks names up in it (its cwd); the directories above it do not matter
    (root / "zero.txt").write_text("nobody may read this\n")
    (root / "zero.txt").chmod(0)
    (root / "plain.txt").write_text("anybody may read this, not with O_NOATIME\n")
    (root / "plain.txt").chmod(0o644)
    run = h.run_trace(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "sh", "-c", SCRIPT],
        recorder=recorder,
        cwd=root,
        json_path=base / "trace.json",
    )
    assert run.returncode == 0, run.describe()
    assert "Permission denied" in run.stderr and "Operation not permitted" in run.stderr, (
        "the opens were not refused as the test expects (EACCES, EPERM)\n" + run.describe()
    )
    return str(root), run


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_refused_by_file_modes(recorder, tmp_path):
    root, run = _record(recorder, Path(os.path.realpath(tmp_path)))
    files = h.files_under(run.doc, root)
    expected = h.normalise_expected({"denied": {"zero.txt", "plain.txt"}})
    problems = h.diff_files(files, expected)
    assert not problems, (
        "files under the directory (relative to it):\n  " + "\n  ".join(problems) + "\n" + run.describe()
    )
    assert run.doc["complete"] is True, run.doc["incompleteReasons"]
    m = re.search(r"(\d+) probed, (\d+) denied$", run.stderr, re.M)
    assert m and int(m.group(2)) == len(run.doc["files"]["denied"]), "the summary counts the denials\n" + run.stderr


def test_engines_agree_on_refusals(tmp_path):
    for recorder in h.RECORDERS:
        h.require_privileges(recorder)
    base = Path(os.path.realpath(tmp_path))
    seen = {}
    for recorder in h.RECORDERS:
        (base / recorder).mkdir()
        root, run = _record(recorder, base / recorder)
        seen[recorder] = h.files_under(run.doc, root)
    problems = h.diff_files(seen["strace"], seen["ebpf"])
    assert not problems, "strace (actual) differs from eBPF (expected):\n  " + "\n  ".join(problems)
