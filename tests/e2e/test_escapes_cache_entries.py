"""Escape suite, cache entries (issue 38): what a task leaves in its outputs cannot become an entry that
later restores something dangerous or too big (links that point away, setuid and setgid bits, sparse and
oversized files)."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from audit_workspace import qk
from enforce_workspace import MODES, enforce, escape_workspace, target

pytestmark = pytest.mark.privileged

ALL_MODES = ("plain", "audit") + MODES  # plain: no sandbox; audit: --sandbox
EVERY = pytest.mark.parametrize("mode", ALL_MODES)
RESTORED = "restored from the cache"


def run(ws: Path, mode: str, tmp_path: Path, env: dict | None = None):
    """qk run-many -t t in `mode`; the run and, under a sandbox, the task's record in its report."""
    report = tmp_path / f"report-{mode}.json"
    if mode in MODES:
        r, doc = enforce(ws, "t", report, mode=mode, env=env)
        return r, doc["tasks"]["app:t"]
    extra = ["--sandbox", "--sandbox-report", str(report)] if mode == "audit" else []
    r = qk(ws, "run-many", "-t", "t", *extra, env=env)
    return r, (json.loads(report.read_text())["tasks"]["app:t"] if mode == "audit" else None)


def cache_entries(ws: Path) -> list[str]:
    cache = ws / ".qk" / "cache"
    return sorted(p.name for p in cache.iterdir() if re.fullmatch(r"[0-9a-f]{32}", p.name)) if cache.exists() else []


def workspace(tmp_path: Path, command: str) -> Path:
    # dist is there before the task: held by Landlock alone qk would make it, and not cache the task for that.
    return escape_workspace(tmp_path / "ws", {"t": target(command, cache=True)}, {"dist/old.txt": "old\n"})


def end_summary(r) -> str:
    return r.stdout[r.stdout.rfind("Successfully ran") if "Successfully ran" in r.stdout else r.stdout.rfind("Ran "):]


def assert_not_stored_and_not_restored(ws: Path, mode: str, tmp_path: Path, why: str, r):
    """Nothing reached the cache: no entry, and a second run with the outputs gone runs the task again."""
    assert cache_entries(ws) == [], r.stdout
    if mode not in MODES:
        # Nothing confines the task there: the cache is what refuses, saying why on its line and at the end.
        assert "the result was not cached" in r.stdout and why in r.stdout, r.stdout
        assert "1 result not cached" in end_summary(r) and why in end_summary(r), r.stdout
    again, _ = run(ws, mode, tmp_path)
    assert RESTORED not in again.stdout, again.stdout
    assert cache_entries(ws) == [], again.stdout


# ---------------------------------------------------------------------------------------------------
# Item 5: outputs that point away


@EVERY
def test_an_output_replaced_by_a_link_out_of_the_workspace(mode, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ws = workspace(tmp_path, f"rm -rf dist && ln -s {elsewhere} dist")
    r, task = run(ws, mode, tmp_path)
    if mode == "overlay":
        # The applier refuses the link: listed as a refused write, with nothing to declare; dist stays.
        assert r.returncode == 0, r.stdout + r.stderr
        assert task["findings"].get("refusedWrites") == ["dist"], task
        assert "1 symbolic link refused" in r.stdout and f"dist -> {elsewhere}" in r.stdout, r.stdout
        assert '"outputs"' not in r.stdout[r.stdout.find("Sandbox enforce:"):], r.stdout
        assert (ws / "dist").is_dir() and not (ws / "dist").is_symlink()
    elif mode == "landlock":
        # Landlock alone never lets a task remove its output directory itself.
        assert r.returncode != 0 and (ws / "dist").is_dir() and not (ws / "dist").is_symlink(), r.stdout
    else:
        assert os.readlink(ws / "dist") == str(elsewhere)
        os.unlink(ws / "dist")
    assert_not_stored_and_not_restored(ws, mode, tmp_path, "outside the workspace", r)
    assert list(elsewhere.iterdir()) == []


@EVERY
@pytest.mark.parametrize("link", ["/etc", "../src"])
def test_a_link_in_an_output_pointing_away(mode, link, tmp_path):
    # /etc: out of the workspace; ../src: inside it, but out of the outputs (where the entry holds nothing).
    ws = workspace(tmp_path, f"echo new > dist/new.txt && ln -s {link} dist/away")
    r, task = run(ws, mode, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist" / "new.txt").read_text() == "new\n"
    why = "outside the workspace" if link == "/etc" else "out of its outputs"
    if mode == "overlay" and link == "/etc":
        assert task["findings"].get("refusedWrites") == ["dist/away"], task
        assert f"dist/away -> {link}" in r.stdout, r.stdout
        assert not os.path.lexists(ws / "dist" / "away")
    else:
        # Landlock allows making a link in an output; so does a run without the sandbox, and the overlay
        # applies one that stays in the workspace as they leave it (test_modes_agree): the cache refuses.
        assert os.readlink(ws / "dist" / "away") == link
        os.unlink(ws / "dist" / "away")
    assert_not_stored_and_not_restored(ws, mode, tmp_path, why, r)


@EVERY
def test_a_link_within_an_output_is_stored_and_restored(mode, tmp_path):
    # The rule refuses only what points away: the tests above could not pass by refusing every link.
    ws = workspace(tmp_path, "echo a > dist/a.txt && ln -sf a.txt dist/b.txt && ln -sfn . dist/self")
    r, task = run(ws, mode, tmp_path)
    assert r.returncode == 0 and "not cached" not in r.stdout, r.stdout
    assert len(cache_entries(ws)) == 1
    for p in ("a.txt", "b.txt", "self"):
        os.unlink(ws / "dist" / p)
    again, _ = run(ws, mode, tmp_path)
    assert RESTORED in again.stdout, again.stdout
    assert os.readlink(ws / "dist" / "b.txt") == "a.txt" and os.readlink(ws / "dist" / "self") == "."


# ---------------------------------------------------------------------------------------------------
# Item 6: setuid and setgid bits


@EVERY
@pytest.mark.parametrize("bits", ["4755", "2755"])
def test_a_set_id_file_is_never_stored(mode, bits, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("a root task's setuid shell needs root")
    ws = workspace(tmp_path, f"cp /bin/sh dist/sh && chmod {bits} dist/sh")
    r, task = run(ws, mode, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    made = os.lstat(ws / "dist" / "sh")
    assert stat.S_IMODE(made.st_mode) == int(bits, 8), oct(made.st_mode)  # the task's own output, as it left it
    os.unlink(ws / "dist" / "sh")
    why = "sets a user id" if bits == "4755" else "sets a group id"
    if mode in MODES:
        assert "the result was not cached" in r.stdout and why in r.stdout, r.stdout
    assert_not_stored_and_not_restored(ws, mode, tmp_path, why, r)


# ---------------------------------------------------------------------------------------------------
# Item 7: outputs too big for the cache, and sparse ones

SPARSE = ("python3 -c \"import os; f = open('dist/big', 'wb'); f.truncate(1 << 30); f.seek(123456789); "
          "f.write(b'data'); f.close()\"")


@pytest.mark.parametrize("mode", ("plain",) + MODES)
def test_a_sparse_output_is_stored_and_restored_sparse(mode, tmp_path):
    # 1 GiB long, one block of data: under a limit of 1 MiB, as the limit counts what it takes on disk.
    ws = workspace(tmp_path, SPARSE)
    env = {"QK_CACHE_MAX_ENTRY_SIZE": "1MiB"}
    r, _ = run(ws, mode, tmp_path, env)
    assert r.returncode == 0 and "not cached" not in r.stdout, r.stdout
    [entry] = cache_entries(ws)
    stored = os.lstat(ws / ".qk" / "cache" / entry / "files" / "dist" / "big")
    assert stored.st_size == 1 << 30 and stored.st_blocks * 512 < 1 << 20, stored
    os.unlink(ws / "dist" / "big")
    again, _ = run(ws, mode, tmp_path, env)
    assert RESTORED in again.stdout, again.stdout
    back = os.lstat(ws / "dist" / "big")
    assert back.st_size == 1 << 30 and back.st_blocks * 512 < 1 << 20, back
    with open(ws / "dist" / "big", "rb") as f:
        f.seek(123456789 - 4)
        assert f.read(12) == b"\0\0\0\0data\0\0\0\0"


@EVERY
def test_an_output_over_the_entry_limit_stays_and_is_not_stored(mode, tmp_path):
    ws = workspace(tmp_path, "head -c 3000000 /dev/urandom > dist/big && echo small > dist/small.txt")
    env = {"QK_CACHE_MAX_ENTRY_SIZE": "1MiB"}
    r, _ = run(ws, mode, tmp_path, env)
    assert r.returncode == 0, r.stdout + r.stderr
    # Nothing lost: the outputs are the task's, in the workspace; the run says why and what to set.
    assert (ws / "dist" / "big").stat().st_size == 3000000 and (ws / "dist" / "small.txt").read_text() == "small\n"
    assert "over the 1 MiB one cache entry may take" in r.stdout, r.stdout
    assert "QK_CACHE_MAX_ENTRY_SIZE=1GiB" in end_summary(r), r.stdout
    assert cache_entries(ws) == [] and not any((ws / ".qk" / "cache" / "tmp").iterdir())
    os.unlink(ws / "dist" / "big")
    again, _ = run(ws, mode, tmp_path, env)
    assert RESTORED not in again.stdout and (ws / "dist" / "big").stat().st_size == 3000000, again.stdout


def test_a_limit_that_is_no_size_is_refused_before_anything_runs(tmp_path):
    ws = workspace(tmp_path, "echo ran > dist/ran.txt")
    r = qk(ws, "run-many", "-t", "t", env={"QK_CACHE_MAX_ENTRY_SIZE": "lots"})
    assert r.returncode != 0 and "QK_CACHE_MAX_ENTRY_SIZE='lots' must be a size" in r.stdout + r.stderr, r
    assert not (ws / "dist" / "ran.txt").exists()
