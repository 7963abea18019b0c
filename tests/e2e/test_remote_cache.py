"""The remote cache's transport (src/remote) against real servers on 127.0.0.1: the npm
turborepo-remote-cache server (turbo's API, local storage; installed by scripts/turbo-cache-server) and
Debian's nginx with WebDAV (Bazel's HTTP cache). Each fault is made for real: the server killed, stopped
(SIGSTOP), failing, refusing a token, its stored file changed, a transfer cut off midway. The client is
the qk-remote tool (tests/tools/qk_remote.cpp), whose exit code names the ErrorKind."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

import qk_harness as h
from remote_servers import KEY, SIGNATURE_KEY, TEAM, TOKEN, NginxServer, TurboServer, servers  # noqa: F401

QK_REMOTE = h.BUILD_DIR / "tests" / "tools" / "qk-remote"

# qk-remote's exit codes (tests/tools/qk_remote.cpp).
HIT, MISS = 0, 1
UNREACHABLE, TIMEOUT, FORBIDDEN, SERVER, TRUNCATED, TAMPERED, PROTOCOL = 10, 11, 12, 13, 14, 15, 16

MiB = 1 << 20


def remote(*args, env: dict, timeout: float = 120, rss: bool = False) -> subprocess.CompletedProcess:
    cmd = [str(QK_REMOTE), *map(str, args)]
    if rss:
        cmd = ["/usr/bin/time", "-f", "maxrss_kib=%M", *cmd]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def max_rss_kib(r: subprocess.CompletedProcess) -> int:
    line = [l for l in r.stderr.splitlines() if l.startswith("maxrss_kib=")][-1]
    return int(line.split("=")[1])


def entry(tmp: Path, size: int, name: str = "entry.bin") -> Path:
    path = tmp / name
    path.write_bytes(os.urandom(size))
    return path


KINDS = ["turbo", "bazel"]


@pytest.mark.parametrize("kind", KINDS)
def test_put_then_get_the_same_bytes_and_a_miss_before(servers, tmp_path, kind):
    srv = servers(kind)
    env = srv.env()
    body = entry(tmp_path, 300_000)
    out = tmp_path / "out.bin"
    assert remote("exists", KEY, env=env).returncode == MISS
    r = remote("get", KEY, out, env=env)
    assert (r.returncode, r.stdout) == (MISS, "miss\n"), r.stderr
    assert not out.exists() and not Path(f"{out}.part").exists()
    r = remote("put", KEY, body, env=env)
    assert (r.returncode, r.stdout) == (HIT, "stored\n"), r.stderr
    assert remote("exists", KEY, env=env).returncode == HIT
    r = remote("get", KEY, out, env=env)
    assert (r.returncode, r.stdout) == (HIT, "hit\n"), r.stderr
    assert out.read_bytes() == body.read_bytes()
    # An empty entry is an entry.
    empty = entry(tmp_path, 0, "empty.bin")
    assert remote("put", "ee", empty, env=env).returncode == HIT
    assert remote("get", "ee", tmp_path / "empty.out", env=env).returncode == HIT
    assert (tmp_path / "empty.out").read_bytes() == b""


def test_turbo_signature_is_turbos_hmac(servers, tmp_path):
    """The stored x-artifact-tag is base64(HMAC-SHA256(key, hash + team + body)), computed here apart."""
    srv = servers("turbo")
    body = entry(tmp_path, 5000)
    assert remote("put", KEY, body, env=srv.env()).returncode == HIT
    expected = base64.b64encode(hmac.new(SIGNATURE_KEY.encode(), KEY.encode() + TEAM.encode() + body.read_bytes(),
                                         hashlib.sha256).digest()).decode()
    assert (srv.storage / TEAM / f"{KEY}.tag").read_text() == expected
    # Another key reads the same artifact as tampered.
    r = remote("get", KEY, tmp_path / "out", env=srv.env(QK_REMOTE_CACHE_SIGNATURE_KEY="another"))
    assert r.returncode == TAMPERED, r.stderr
    assert not (tmp_path / "out").exists()


def test_turbo_unsigned_artifact_is_refused_under_a_signature_key(servers, tmp_path):
    srv = servers("turbo", signature_key=None)  # the server keeps no tags
    body = entry(tmp_path, 5000)
    assert remote("put", KEY, body, env=srv.env()).returncode == HIT
    r = remote("get", KEY, tmp_path / "out", env=srv.env())
    assert r.returncode == TAMPERED and "no x-artifact-tag" in r.stderr, r.stderr
    # Without a key of its own, the client takes it.
    r = remote("get", KEY, tmp_path / "out", env=srv.env(QK_REMOTE_CACHE_SIGNATURE_KEY=None))
    assert r.returncode == HIT, r.stderr
    assert (tmp_path / "out").read_bytes() == body.read_bytes()


@pytest.mark.parametrize("kind", KINDS)
def test_tampered_stored_body_is_refused(servers, tmp_path, kind):
    srv = servers(kind)
    body = entry(tmp_path, 100_000)
    assert remote("put", KEY, body, env=srv.env()).returncode == HIT
    stored = srv.stored(KEY)
    data = bytearray(stored.read_bytes())
    data[50_000] ^= 0x01  # one bit, same size
    stored.write_bytes(bytes(data))
    out = tmp_path / "out"
    r = remote("get", KEY, out, env=srv.env())
    assert r.returncode == TAMPERED, r.stderr
    assert not out.exists() and not Path(f"{out}.part").exists()


def test_bazel_pointer_that_is_not_ours_is_a_protocol_error(servers, tmp_path):
    srv = servers("bazel")
    assert remote("put", KEY, entry(tmp_path, 1000), env=srv.env()).returncode == HIT
    ac = srv.store / "rw" / "ac" / hashlib.sha256(f"qk-entry:{KEY}".encode()).hexdigest()
    ac.write_bytes(b"\x0a\x20an ActionResult proto")
    r = remote("get", KEY, tmp_path / "out", env=srv.env())
    assert r.returncode == PROTOCOL, r.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_server_down_is_unreachable(servers, tmp_path, kind):
    srv = servers(kind)
    srv.stop()  # nothing listens on its port now
    body = entry(tmp_path, 1000)
    for args in (("exists", KEY), ("get", KEY, tmp_path / "out"), ("put", KEY, body)):
        r = remote(*args, env=srv.env())
        assert r.returncode == UNREACHABLE, (args, r.stderr)
        assert f"127.0.0.1:{srv.port}" in r.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_stalled_server_times_out_within_the_stall_timeout(servers, tmp_path, kind):
    srv = servers(kind)
    body = entry(tmp_path, 1000)
    assert remote("put", KEY, body, env=srv.env()).returncode == HIT
    srv.proc.send_signal(signal.SIGSTOP)  # the kernel still accepts connections; nothing answers
    try:
        for args in (("get", KEY, tmp_path / "out"), ("put", KEY, body)):
            start = time.monotonic()
            r = remote(*args, env=srv.env(QK_REMOTE_CACHE_STALL_TIMEOUT=1), timeout=60)
            elapsed = time.monotonic() - start
            assert r.returncode == TIMEOUT, (args, r.stderr)
            assert elapsed < 6, f"{args}: gave up after {elapsed:.1f} s with a stall timeout of 1 s"
    finally:
        srv.proc.send_signal(signal.SIGCONT)
    assert remote("get", KEY, tmp_path / "out", env=srv.env()).returncode == HIT


def test_a_server_dripping_an_entry_is_a_stall(servers, tmp_path):
    # 20 KB at 100 bytes a second would take 200 s: under 1 KiB/s over the stall time, it gives up.
    srv = servers("bazel")
    assert remote("put", KEY, entry(tmp_path, 20_000), env=srv.env()).returncode == HIT
    drip = srv.env(QK_REMOTE_CACHE_STALL_TIMEOUT=2)
    drip["QK_REMOTE_CACHE_URL"] = drip["QK_REMOTE_CACHE_URL"].replace("/rw", "/drip")
    start = time.monotonic()
    r = remote("get", KEY, tmp_path / "out", env=drip, timeout=120)
    assert r.returncode == TIMEOUT, r.stderr
    assert time.monotonic() - start < 20


def test_turbo_server_failing_is_a_server_error(servers, tmp_path):
    srv = servers("turbo", signature_key=None)
    # The stored artifact made a directory: the server's read fails (EISDIR) and it answers 500.
    srv.stored(KEY).mkdir(parents=True)
    r = remote("get", KEY, tmp_path / "out", env=srv.env(QK_REMOTE_CACHE_SIGNATURE_KEY=None))
    assert r.returncode == SERVER, r.stderr


def test_nginx_server_failing_is_a_server_error(servers, tmp_path):
    srv = servers("bazel", location="fail")
    for args in (("exists", KEY), ("get", KEY, tmp_path / "out"), ("put", KEY, entry(tmp_path, 1000))):
        r = remote(*args, env=srv.env())
        assert r.returncode == SERVER, (args, r.stderr)


def test_an_error_page_without_end_is_not_read_to_its_end(servers, tmp_path):
    # The status says what the answer is: a server sending a page of 1 TiB with it cannot hold the run.
    srv = servers("bazel", location="endless")
    started = time.monotonic()
    r = remote("get", KEY, tmp_path / "out", env=srv.env(), timeout=60)
    assert r.returncode == SERVER, r.stderr
    assert time.monotonic() - started < 30


def test_turbo_read_only_and_wrong_tokens(servers, tmp_path):
    storage = tmp_path / "shared-storage"
    body = entry(tmp_path, 2000)
    writer = servers("turbo", storage=storage)
    assert remote("put", KEY, body, env=writer.env()).returncode == HIT
    r = remote("get", KEY, tmp_path / "out", env=writer.env(QK_REMOTE_CACHE_TOKEN="wrong-token-xyz"))
    assert r.returncode == FORBIDDEN and "wrong-token-xyz" not in r.stderr, r.stderr
    writer.stop()
    reader = servers("turbo", storage=storage, read_only=True)
    r = remote("put", "ab", body, env=reader.env())
    assert r.returncode == FORBIDDEN and TOKEN not in r.stderr, r.stderr
    assert remote("get", KEY, tmp_path / "out", env=reader.env()).returncode == HIT
    assert (tmp_path / "out").read_bytes() == body.read_bytes()


def test_nginx_read_only_and_wrong_tokens(servers, tmp_path):
    srv = servers("bazel")
    body = entry(tmp_path, 2000)
    assert remote("put", KEY, body, env=srv.env()).returncode == HIT
    base = f"http://127.0.0.1:{srv.port}"
    ro = srv.env(QK_REMOTE_CACHE_URL=f"{base}/ro")
    r = remote("put", "ab", body, env=ro)
    assert r.returncode == FORBIDDEN, r.stderr
    assert remote("get", KEY, tmp_path / "out", env=ro).returncode == HIT
    assert (tmp_path / "out").read_bytes() == body.read_bytes()
    auth = srv.env(QK_REMOTE_CACHE_URL=f"{base}/auth", QK_REMOTE_CACHE_TOKEN=TOKEN)
    assert remote("put", "cd", body, env=auth).returncode == HIT
    assert remote("get", "cd", tmp_path / "out2", env=auth).returncode == HIT
    wrong = srv.env(QK_REMOTE_CACHE_URL=f"{base}/auth", QK_REMOTE_CACHE_TOKEN="wrong-token")
    for args in (("get", "cd", tmp_path / "out3"), ("put", "ef", body)):
        r = remote(*args, env=wrong)
        assert r.returncode == FORBIDDEN and "wrong-token" not in r.stderr, (args, r.stderr)


@pytest.mark.parametrize("kind", KINDS)
def test_server_killed_mid_transfer_is_truncated(servers, tmp_path, kind):
    """A large GET under way: the client paused (SIGSTOP) once bytes arrive, the server killed, the client
    resumed: it reads what the kernel had buffered, then the connection's end before the body's."""
    body = entry(tmp_path, 50 * MiB)
    out = tmp_path / "out"
    part = Path(f"{out}.part")
    for _attempt in range(3):
        srv = servers(kind)
        assert remote("put", KEY, body, env=srv.env()).returncode == HIT
        client = subprocess.Popen([QK_REMOTE, "get", KEY, out], env=srv.env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while client.poll() is None and not (part.exists() and part.stat().st_size > 0):
            assert time.monotonic() < deadline, "no byte of the body arrived"
            time.sleep(0.001)
        client.send_signal(signal.SIGSTOP)
        if client.poll() is not None:  # it was done before it could be stopped: again, with a fresh server
            client.communicate()
            srv.stop()
            continue
        srv.stop()
        client.send_signal(signal.SIGCONT)
        _, err = client.communicate(timeout=60)
        if client.returncode == HIT:  # the whole body was already in the kernel's buffers
            continue
        assert client.returncode == TRUNCATED, err
        assert not out.exists() and not part.exists()
        return
    pytest.fail("three transfers of 50 MiB finished before the server could be killed")


@pytest.mark.parametrize("kind", KINDS)
def test_large_entry_is_streamed_in_small_memory(servers, tmp_path, kind):
    srv = servers(kind)
    body = entry(tmp_path, 50 * MiB)
    r = remote("put", KEY, body, env=srv.env(), rss=True)
    assert r.returncode == HIT, r.stderr
    put_rss = max_rss_kib(r)
    out = tmp_path / "out"
    r = remote("get", KEY, out, env=srv.env(), rss=True)
    assert r.returncode == HIT, r.stderr
    get_rss = max_rss_kib(r)
    assert hashlib.sha256(out.read_bytes()).digest() == hashlib.sha256(body.read_bytes()).digest()
    # A 50 MiB entry held in memory would be 51,200 KiB at least.
    assert put_rss < 24 * 1024 and get_rss < 24 * 1024, (put_rss, get_rss)


@pytest.mark.parametrize("kind", KINDS)
def test_several_transfers_at_once_from_threads(servers, tmp_path, kind):
    srv = servers(kind)
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    keys = [f"{i:02x}" * 16 for i in range(8)]
    for k in keys:
        entry(src, 256 * 1024 + int(k[:2], 16), k)
    r = remote("put-all", src, *keys, env=srv.env())
    assert r.returncode == HIT and sorted(r.stdout.splitlines()) == sorted(f"{k} stored" for k in keys), r.stderr
    r = remote("get-all", dst, *keys, "ffff", env=srv.env())
    assert r.returncode == MISS, r.stderr  # the last key's miss
    assert sorted(r.stdout.splitlines()) == sorted([f"{k} hit" for k in keys] + ["ffff miss"])
    for k in keys:
        assert (dst / k).read_bytes() == (src / k).read_bytes()


def test_bad_settings_and_keys_are_errors_that_hide_secrets(tmp_path):
    env = {"PATH": os.environ.get("PATH", ""), "QK_REMOTE_CACHE_URL": "ftp://user:hunter2@host/x"}
    r = remote("exists", KEY, env=env)
    assert r.returncode == 2 and "QK_REMOTE_CACHE_URL" in r.stderr and "hunter2" not in r.stderr, r.stderr
    env["QK_REMOTE_CACHE_URL"] = "http://127.0.0.1:1"
    r = remote("exists", "../etc/passwd", env=env)
    assert r.returncode == 2 and "not a cache key" in r.stderr, r.stderr
    env["QK_REMOTE_CACHE_PROTOCOL"] = "s3"
    r = remote("exists", KEY, env=env)
    assert r.returncode == 2 and "QK_REMOTE_CACHE_PROTOCOL='s3'" in r.stderr, r.stderr
