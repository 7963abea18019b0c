"""qk run-many with a remote cache, against real servers on 127.0.0.1 (the npm turborepo-remote-cache
server, nginx with WebDAV): one checkout fills the server, a fresh checkout with an empty local cache
restores from it, each task's sandbox record travelling with its entry; only verified results are shared
by default, and a reader can refuse the rest; a server down, a tampered entry, a read-only token or an
archive that would write outside the workspace never fail a task."""

from __future__ import annotations

import gzip
import json
import signal
import struct
import subprocess
from pathlib import Path

import pytest

import qk_harness as h
from audit_workspace import make_workspace, qk
from remote_servers import TEAM, servers  # noqa: F401

QK_REMOTE = h.BUILD_DIR / "tests" / "tools" / "qk-remote"

pytestmark = pytest.mark.privileged  # the upload policy needs the sandbox's verdict: a recorder

# lib's build is clean; app's reads notes.txt, which no input declares: a finding, so not verified.
PROJECTS = {
    "lib": {
        "root": "libs/lib",
        "targets": {
            "build": {
                "command": "mkdir -p libs/lib/dist/sub && cat libs/lib/src/a.txt > libs/lib/dist/out.txt && "
                           "printf x > libs/lib/dist/sub/deep.txt && chmod 755 libs/lib/dist/out.txt && echo built lib",
                "outputs": ["{projectRoot}/dist"],
            }
        },
    },
    "app": {
        "root": "apps/app",
        "targets": {
            "build": {
                "command": "mkdir -p apps/app/dist && cat apps/app/src/main.txt notes.txt > apps/app/dist/app.txt && "
                           "echo built app",
                "outputs": ["{projectRoot}/dist"],
            }
        },
    },
}
# As in a real checkout, the outputs are ignored: a key does not hold what the task writes.
FILES = {"libs/lib/src/a.txt": "lib source\n", "apps/app/src/main.txt": "app source\n", "notes.txt": "notes\n",
         ".gitignore": "dist/\n"}
NX = {"namedInputs": {"default": ["{projectRoot}/**/*"]}, "targetDefaults": {"build": {"cache": True}}}


def checkout(root: Path, nx: dict | None = None) -> Path:
    """A fresh checkout: the sources alone, no .qk, no outputs."""
    return make_workspace(root, PROJECTS, FILES, nx=nx or NX)


def run(ws: Path, srv, *more: str, env: dict | None = None, sandbox: bool = True):
    """qk run-many -t build against the server, with --report; the run and each task's source."""
    report = ws.parent / f"{ws.name}-run-report.json"
    args = ["run-many", "-t", "build", "--report", str(report), *more]
    if sandbox:
        args += ["--sandbox", "--sandbox-report", str(sandbox_report(ws))]
    r = qk(ws, *args, env=srv.env(**(env or {})))
    assert report.exists(), r.stdout + r.stderr
    sources = {t: v.get("source") for t, v in json.loads(report.read_text())["tasks"].items()}
    return r, sources


def sandbox_report(ws: Path) -> Path:
    return ws.parent / f"{ws.name}-sandbox-report.json"


def task_hash(ws: Path, task: str) -> str:
    return json.loads((ws.parent / f"{ws.name}-run-report.json").read_text())["tasks"][task]["hash"]


def outputs(ws: Path) -> dict[str, tuple[bytes, int]]:
    found = {}
    for project in ("libs/lib", "apps/app"):
        for p in sorted((ws / project / "dist").rglob("*")):
            if p.is_file():
                found[str(p.relative_to(ws))] = (p.read_bytes(), p.stat().st_mode & 0o777)
    return found


def stored_entries(srv) -> list[str]:
    team = srv.storage / TEAM
    return sorted(p.name for p in team.iterdir()) if team.exists() else []


def remote_notes(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if "qk: remote cache " in line]


def remote_block(stdout: str) -> list[str]:
    """The summary's remote block, said once a run: its headline after "remote (<server>): ", then each
    reason under it."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("  remote (")]
    assert len(starts) == 1, stdout
    block = [lines[starts[0]].split("): ", 1)[1]]
    for more in lines[starts[0] + 1:]:
        if not more.startswith("    "):
            break
        block.append(more.strip())
    return block


def counted(block: list[str], reason: str) -> int:
    """The count of the block's line that says `reason` (0 when no line does)."""
    found = [int(line.split()[0].replace(",", "")) for line in block[1:] if reason in line]
    assert len(found) <= 1, block
    return found[0] if found else 0


WENT_BEYOND = "1 result kept local: went beyond its declarations (see the sandbox report)"


@pytest.mark.parametrize("kind", ["turbo", "bazel"])
def test_a_fresh_checkout_restores_from_the_server_with_each_tasks_record(servers, tmp_path, kind):
    srv = servers(kind)
    a = checkout(tmp_path / "a")
    r, sources = run(a, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources == {"app:build": "ran", "lib:build": "ran"}
    assert remote_notes(r.stdout) == [], r.stdout
    # What was shared and what not, and why, once in the summary.
    assert remote_block(r.stdout) == ["0 restored, 2 not on the server; uploaded 1", WENT_BEYOND], r.stdout

    # The other machine: an empty local cache. lib's verified result comes from the server, whole (modes
    # and a nested file included); app's (a read outside its inputs) was not shared, so it runs.
    b = checkout(tmp_path / "b")
    r, sources = run(b, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources == {"app:build": "ran", "lib:build": "restoredRemote"}, r.stdout
    assert outputs(b) == outputs(a)
    assert "built lib" not in r.stdout  # its terminal output is not replayed unless asked (--output-style)
    assert remote_notes(r.stdout) == [], r.stdout
    report = json.loads(sandbox_report(b).read_text())
    lib = report["tasks"]["lib:build"]
    # The record made where it ran: audited, nothing found, that run's provenance.
    assert lib["fromRemoteCache"] is True
    assert lib["status"] == "audited" and lib["findings"] == {}
    assert "restored from the remote cache, audited where it ran: lib:build" in r.stdout
    assert remote_block(r.stdout) == ["1 restored, 1 not on the server; uploaded nothing", WENT_BEYOND], r.stdout
    assert "(1 restored from the cache, 1 of them from the remote cache)" in r.stdout

    # Stored locally on the way: the next run restores it from its own cache, and says it was local.
    r, sources = run(b, srv)
    assert sources["lib:build"] in ("restored", "restoredInPlace"), r.stdout
    assert "of them from the remote cache" not in r.stdout
    assert remote_block(r.stdout) == ["nothing to fetch (every result was local, or not cacheable)"], r.stdout

    # A plain run tells restores from the server apart from local ones, and why it uploads nothing.
    c = checkout(tmp_path / "c")
    r, sources = run(c, srv, sandbox=False)
    assert sources == {"app:build": "ran", "lib:build": "restoredRemote"}, r.stdout
    assert "(1 restored from the cache, 1 of them from the remote cache)" in r.stdout
    assert remote_block(r.stdout) == [
        "1 restored, 1 not on the server; uploaded nothing: this run is not sandboxed and the policy uploads "
        "verified results (1 result kept local; run with --sandbox to verify them, or set nx.json's "
        "qk.remoteCache.upload to \"any\")"], r.stdout
    r, sources = run(c, srv, sandbox=False)
    assert set(sources.values()) <= {"restored", "restoredInPlace"}, r.stdout
    assert "(2 restored from the cache)" in r.stdout
    assert remote_block(r.stdout) == ["nothing to fetch (every result was local, or not cacheable)"], r.stdout


def test_upload_any_shares_findings_and_trust_verified_refuses_them(servers, tmp_path):
    srv = servers("turbo")
    nx_any = dict(NX, qk={"remoteCache": {"upload": "any"}})
    a = checkout(tmp_path / "a", nx_any)
    r, _ = run(a, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert remote_block(r.stdout) == ["0 restored, 2 not on the server; uploaded 2"], r.stdout

    # A reader that trusts any result restores both, app's record with its finding.
    b = checkout(tmp_path / "b")
    r, sources = run(b, srv)
    assert sources == {"app:build": "restoredRemote", "lib:build": "restoredRemote"}, r.stdout
    app = json.loads(sandbox_report(b).read_text())["tasks"]["app:build"]
    assert app["fromRemoteCache"] is True and app["findings"]["readsOutsideInputs"] == ["notes.txt"]

    # One that trusts only verified results refuses app's, says so once, and runs it.
    c = checkout(tmp_path / "c", dict(NX, qk={"remoteCache": {"trust": "verified"}}))
    r, sources = run(c, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources == {"app:build": "ran", "lib:build": "restoredRemote"}, r.stdout
    notes = remote_notes(r.stdout)
    assert len(notes) == 1 and 'trust is "verified", and this task\'s entry is not' in notes[0], r.stdout
    assert remote_block(r.stdout) == ["1 restored; uploaded nothing", WENT_BEYOND,
                                      '1 not restored: trust is "verified", and its record is not'], r.stdout


def test_without_the_sandbox_nothing_is_verified_so_nothing_is_shared(servers, tmp_path):
    srv = servers("turbo")
    a = checkout(tmp_path / "a")
    r, _ = run(a, srv, sandbox=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert stored_entries(srv) == []
    assert remote_block(r.stdout) == [
        "0 restored, 2 not on the server; uploaded nothing: this run is not sandboxed and the policy uploads "
        "verified results (2 results kept local; run with --sandbox to verify them, or set nx.json's "
        "qk.remoteCache.upload to \"any\")"], r.stdout
    b = checkout(tmp_path / "b")
    r, sources = run(b, srv, sandbox=False)
    assert sources == {"app:build": "ran", "lib:build": "ran"}, r.stdout


def test_read_and_off_upload_nothing(servers, tmp_path):
    srv = servers("turbo")
    for flag in ("--remote-cache=read", "--remote-cache=off"):
        ws = checkout(tmp_path / flag.split("=")[1])
        r, _ = run(ws, srv, flag)
        assert r.returncode == 0, r.stdout + r.stderr
        if flag == "--remote-cache=read":
            assert remote_block(r.stdout) == [
                "0 restored, 2 not on the server; uploads nothing: this run only reads (--remote-cache=read, or "
                "nx.json's qk.remoteCache.readOnly), 2 results kept local"], r.stdout
        else:
            assert "  remote (" not in r.stdout
    assert stored_entries(srv) == []


@pytest.mark.parametrize("kind", ["turbo", "bazel"])
def test_server_down_the_run_goes_on_and_says_so_once(servers, tmp_path, kind):
    srv = servers(kind)
    srv.stop()
    ws = checkout(tmp_path / "a")
    r, sources = run(ws, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources == {"app:build": "ran", "lib:build": "ran"}
    notes = remote_notes(r.stdout)
    assert len(notes) == 1, r.stdout
    assert "this run goes on without the remote cache" in notes[0]
    # Its own words, not a stall's.
    assert "the server is unreachable" in notes[0] and "stalled" not in notes[0], notes[0]
    block = remote_block(r.stdout)
    # Both entries were wanted: each either failed or was not asked for once the server was given up on.
    assert counted(block, "not restored: the server was unreachable") >= 1, block
    assert counted(block, "not restored: the server was unreachable") + counted(block, "not asked for") == 2, block
    assert block[0] == "0 restored; uploaded nothing" and WENT_BEYOND in block, block
    assert "1 result kept local: not sent: the server had stopped answering (said above)" in block, block
    assert "waiting for the remote cache" not in r.stderr  # it refused at once: nothing was waited for


@pytest.mark.parametrize("kind", ["turbo", "bazel"])
def test_a_stalled_server_costs_a_stall_timeout_not_a_hang(servers, tmp_path, kind):
    srv = servers(kind)
    a = checkout(tmp_path / "a")
    run(a, srv)
    srv.proc.send_signal(signal.SIGSTOP)  # connections are still accepted by the kernel, then nothing moves
    b = checkout(tmp_path / "b")
    # The harness's timeout (120 s) is the bound: without the stall timeout the run would wait for ever.
    r, sources = run(b, srv, env={"QK_REMOTE_CACHE_STALL_TIMEOUT": "3", "QK_REMOTE_CACHE_CONNECT_TIMEOUT": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources == {"app:build": "ran", "lib:build": "ran"}, r.stdout
    notes = remote_notes(r.stdout)
    assert len(notes) == 1 and "this run goes on without the remote cache" in notes[0], r.stdout
    # A stall in its own words, not an unreachable server's.
    assert "the server is stalled" in notes[0] and "unreachable" not in notes[0], notes[0]
    # While it waited, qk said so once on stderr, and for how long it would.
    waiting = [line for line in r.stderr.splitlines() if "waiting for the remote cache" in line]
    assert len(waiting) == 1, r.stderr
    assert "has had no answer for 1 s; qk gives up on the server after 3 s without one " \
           "(QK_REMOTE_CACHE_STALL_TIMEOUT)" in waiting[0], waiting
    block = remote_block(r.stdout)
    assert counted(block, "not restored: the server stalled") >= 1, block
    assert counted(block, "not restored: the server stalled") + counted(block, "not asked for") == 2, block
    assert outputs(b) == outputs(a)


def test_a_failing_server_is_said_once_and_every_task_runs(servers, tmp_path):
    # nginx answering 500 to everything (its /fail/ location): a server error is not a miss, and not a
    # reason to fail a task.
    srv = servers("bazel", location="fail")
    ws = checkout(tmp_path / "a")
    r, sources = run(ws, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources == {"app:build": "ran", "lib:build": "ran"}, r.stdout
    notes = remote_notes(r.stdout)
    assert len(notes) == 1 and "500" in notes[0], r.stdout
    # A server error gives up nothing: each fetch and the one upload the policy allows failed, each counted.
    assert remote_block(r.stdout) == ["0 restored; uploaded nothing", WENT_BEYOND,
                                      "2 not restored: the server failed (a 5xx status)",
                                      "1 result not uploaded: the server failed (a 5xx status)"], r.stdout
    r, sources = run(ws, srv)  # stored locally all the same
    assert set(sources.values()) <= {"restored", "restoredInPlace"}, r.stdout


@pytest.mark.parametrize("kind", ["turbo", "bazel"])
def test_a_tampered_entry_is_not_restored_and_the_task_runs(servers, tmp_path, kind):
    srv = servers(kind)
    a = checkout(tmp_path / "a")
    run(a, srv)
    lib_hash = task_hash(a, "lib:build")
    stored = srv.stored(lib_hash)
    body = bytearray(stored.read_bytes())
    body[len(body) // 2] ^= 0x40
    stored.write_bytes(bytes(body))

    b = checkout(tmp_path / "b")
    r, sources = run(b, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources["lib:build"] == "ran", r.stdout
    notes = remote_notes(r.stdout)
    assert len(notes) == 1 and "fetching failed" in notes[0], r.stdout
    assert outputs(b) == outputs(a)
    assert not list((b / ".qk" / "cache" / "tmp").iterdir())  # nothing half-imported left
    # The run's own verified result went over the refused entry (no HEAD said "there already")...
    block = remote_block(r.stdout)
    assert block[0] == "0 restored, 1 not on the server; uploaded 1", block
    assert counted(block, "not restored: refused as corrupt") == 1, block
    assert "1 uploaded over an entry the server held that this run refused as corrupt" in block, block
    # ...so the next machine restores it.
    c = checkout(tmp_path / "c")
    r, sources = run(c, srv)
    assert sources["lib:build"] == "restoredRemote", r.stdout
    assert remote_notes(r.stdout) == [], r.stdout
    assert outputs(c) == outputs(a)


def test_a_read_only_token_is_said_once_and_the_run_goes_on(servers, tmp_path):
    srv = servers("turbo", read_only=True)
    ws = checkout(tmp_path / "a")
    r, sources = run(ws, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    notes = remote_notes(r.stdout)
    assert len(notes) == 1 and "this run uploads nothing" in notes[0], r.stdout
    assert remote_block(r.stdout) == ["0 restored, 2 not on the server; uploaded nothing", WENT_BEYOND,
                                      "1 result not uploaded: the server refused the token"], r.stdout


def test_no_token_is_said_as_such_and_counted(servers, tmp_path):
    # turborepo-remote-cache answers a request without a token 400: the run says what is missing.
    srv = servers("turbo")
    ws = checkout(tmp_path / "a")
    r, sources = run(ws, srv, env={"QK_REMOTE_CACHE_TOKEN": None})
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources == {"app:build": "ran", "lib:build": "ran"}
    notes = remote_notes(r.stdout)
    assert len(notes) == 1 and "no token: set QK_REMOTE_CACHE_TOKEN" in notes[0], r.stdout
    assert "unexpected status" not in r.stdout
    block = remote_block(r.stdout)
    refused = counted(block, "not restored: the server refused the token")
    assert refused >= 1 and refused + counted(block, "not asked for") == 2, block


def test_an_entry_above_the_servers_limit_is_said_and_counted(servers, tmp_path):
    srv = servers("turbo", body_limit=64)  # bytes: every entry is larger
    ws = checkout(tmp_path / "a")
    r, _ = run(ws, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    notes = remote_notes(r.stdout)
    assert len(notes) == 1 and "413: the server refuses an entry this large" in notes[0], r.stdout
    assert "BODY_LIMIT" in notes[0]
    assert remote_block(r.stdout) == ["0 restored, 2 not on the server; uploaded nothing", WENT_BEYOND,
                                      "1 result not uploaded: too large for the server (413): raise its limit "
                                      "(turborepo-remote-cache: BODY_LIMIT; nginx: client_max_body_size)"], r.stdout


def test_results_outside_the_sandbox_or_keyed_by_reads_are_kept_local_and_said(servers, tmp_path):
    srv = servers("turbo")
    projects = json.loads(json.dumps(PROJECTS))
    projects["lib"]["targets"]["build"]["qk:sandbox"] = False
    ws = make_workspace(tmp_path / "a", projects, FILES, nx=NX)
    r, _ = run(ws, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert remote_block(r.stdout) == [
        "0 restored, 2 not on the server; uploaded nothing",
        '1 result kept local: its target runs outside the sandbox ("qk:sandbox": false), and the policy uploads '
        "verified results", WENT_BEYOND], r.stdout
    # --record keys each result of a qk:ultracache target by what it read: another machine could not
    # choose among them.
    projects = json.loads(json.dumps(PROJECTS))
    for p in projects.values():
        p["targets"]["build"]["qk:ultracache"] = {}
    b = make_workspace(tmp_path / "b", projects, FILES, nx=NX)
    r, _ = run(b, srv, "--record")
    assert r.returncode == 0, r.stdout + r.stderr
    block = remote_block(r.stdout)
    assert "2 results kept local: keyed by what they read (--record), which another machine cannot check" in block, \
        block
    assert stored_entries(srv) == []


def reframed(archive: bytes, edit) -> bytes:
    """The archive (src/key/README.md: gzip of a magic line, three length-prefixed parts, then the files'
    bytes) with its meta.json changed by `edit`."""
    raw = gzip.decompress(archive)
    pos = raw.index(b"\n") + 1
    head, parts = raw[:pos], []
    for _ in range(3):
        (n,) = struct.unpack_from("<Q", raw, pos)
        parts.append(raw[pos + 8:pos + 8 + n])
        pos += 8 + n
    meta = json.loads(parts[0])
    edit(meta)
    parts[0] = json.dumps(meta).encode()
    body = head + b"".join(struct.pack("<Q", len(p)) + p for p in parts) + raw[pos:]
    return gzip.compress(body)


def put_reframed(srv, key: str, edit, tmp_path: Path) -> None:
    """The server's entry for `key` with its meta.json changed by `edit`, stored back as the server stores
    any entry (signed with the key, where turbo has one)."""
    hostile = tmp_path / "hostile.bin"
    hostile.write_bytes(reframed(srv.stored(key).read_bytes(), edit))
    put = subprocess.run([str(QK_REMOTE), "put", key, str(hostile)], env=srv.env(), capture_output=True, text=True,
                         timeout=60)
    assert put.returncode == 0, put.stderr


@pytest.mark.parametrize("kind", ["turbo", "bazel"])
@pytest.mark.parametrize("path", ["../escape.txt", "/tmp/qk-e2e-escape.txt", "libs/lib/dist/../../../escape.txt"])
def test_an_archive_that_would_write_outside_is_refused(servers, tmp_path, kind, path):
    srv = servers(kind)
    a = checkout(tmp_path / "a")
    run(a, srv)
    lib_hash = task_hash(a, "lib:build")

    def escape(meta):
        first = next(f for f in meta["files"] if f["kind"] == "file")
        first["path"] = path

    put_reframed(srv, lib_hash, escape, tmp_path)

    b = checkout(tmp_path / "w" / "b")
    r, sources = run(b, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources["lib:build"] == "ran", r.stdout
    notes = remote_notes(r.stdout)
    assert len(notes) == 1 and "which is not a plain relative path" in notes[0], r.stdout
    for outside in (tmp_path / "w" / "escape.txt", tmp_path / "escape.txt", Path("/tmp/qk-e2e-escape.txt")):
        assert not outside.exists()
    assert not list((b / ".qk" / "cache" / "tmp").iterdir())


@pytest.mark.parametrize("kind", ["turbo", "bazel"])
def test_an_archive_naming_outputs_the_task_does_not_declare_is_refused(servers, tmp_path, kind):
    # Restoring first clears what an entry's outputs name: an entry that names the task's sources as an
    # output would remove and replace them. Its paths are plain and within the outputs it names.
    srv = servers(kind)
    a = checkout(tmp_path / "a")
    run(a, srv)
    lib_hash = task_hash(a, "lib:build")

    def widen(meta):
        meta["outputs"] = ["libs/lib/src", *meta["outputs"]]
        first = next(f for f in meta["files"] if f["kind"] == "file")
        first["path"] = "libs/lib/src/" + first["path"].rsplit("/", 1)[-1]

    put_reframed(srv, lib_hash, widen, tmp_path)

    b = checkout(tmp_path / "w" / "b")
    sources_before = {p.name: p.read_bytes() for p in (b / "libs/lib/src").iterdir()}
    r, sources = run(b, srv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sources["lib:build"] == "ran", r.stdout
    assert "its cache entry restores other outputs (libs/lib/src, libs/lib/dist) than the task declares " \
           "(libs/lib/dist); the entry is removed and the task runs" in r.stdout, r.stdout
    assert {p.name: p.read_bytes() for p in (b / "libs/lib/src").iterdir()} == sources_before
    assert (b / "libs/lib/dist/out.txt").read_text() == "lib source\n"


def test_a_task_never_sees_the_remote_caches_token_or_key(servers, tmp_path):
    # With them a hostile task could put on the shared server what no sandbox verified. Its environment
    # never holds them; under enforce neither does any process it can read the environment of, up its
    # chain of parents to qk.
    srv = servers("turbo")
    walk = ("p=$$; while [ \"$p\" -gt 1 ]; do tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null; "
            "p=$(awk '/^PPid:/ {print $2}' /proc/$p/status); done; true")
    ws = make_workspace(tmp_path / "ws", {"app": {"root": "packages/app", "targets": {
        "env": {"command": "env", "cache": False}, "ancestors": {"command": walk, "cache": False}}}})
    secrets = ("QK_REMOTE_CACHE_TOKEN", "QK_REMOTE_CACHE_SIGNATURE_KEY", srv.env()["QK_REMOTE_CACHE_TOKEN"])
    for mode in ("audit", "enforce"):
        r = qk(ws, "run-many", "-t", "env", f"--sandbox={mode}", env=srv.env())
        assert r.returncode == 0 and "app:env | PATH=" in r.stdout, r.stdout + r.stderr
        assert not any(s in r.stdout for s in secrets), r.stdout
    r = qk(ws, "run-many", "-t", "ancestors", "--sandbox=enforce", env=srv.env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert not any(s in r.stdout for s in secrets), r.stdout
