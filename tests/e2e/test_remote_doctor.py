"""qk doctor with a remote cache named, against the real servers on 127.0.0.1 (turborepo-remote-cache from
npm, Debian's nginx with WebDAV): reached, the token taken, a probe entry written and read back; each
failure said in its own words with what to do, and the exit status 1. Without a server named, no check."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

import qk_harness as h
from audit_workspace import QK, make_workspace
from remote_servers import TEAM, NginxServer, free_port, servers, wait_listening  # noqa: F401

PROBE_KEY = "000000000000000000000000000000000000000000000000000000000d0c7000"  # remote_check.hpp


def doctor(cwd: Path, env: dict) -> tuple[subprocess.CompletedProcess, dict[str, str], dict[str, str]]:
    """qk doctor's run, its remote checks (name -> "ok ..." / "FAIL ..." / "-- ...") and their fixes."""
    r = subprocess.run([str(QK), "doctor"], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)
    checks, fixes, last = {}, {}, None
    for line in r.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0] in ("ok", "FAIL", "--") and parts[1].startswith("remote"):
            checks[parts[1]] = parts[0] + " " + parts[2]
            last = parts[1]
        elif last and line.strip().startswith("fix: "):
            fixes[last] = line.strip()[len("fix: "):]
            last = None
        else:
            last = None
    return r, checks, fixes


@pytest.mark.parametrize("kind", ["turbo", "bazel"])
def test_a_working_server_is_reached_written_and_read_back(servers, tmp_path, kind):
    srv = servers(kind)
    r, checks, _ = doctor(tmp_path, srv.env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(checks) == ["remote-reach", "remote-token", "remote-write", "remote-protocol"], r.stdout
    assert all(v.startswith("ok") for v in checks.values()), r.stdout
    assert checks["remote-protocol"] == ("ok the probe entry read back whole, its signature checked" if kind == "turbo"
                                         else "ok the probe entry read back whole, its SHA-256 checked"), r.stdout
    if kind == "turbo":  # really written, where the server keeps entries
        assert srv.stored(PROBE_KEY).exists()
    else:
        assert srv.stored(PROBE_KEY).read_bytes() == b"qk doctor's probe entry: safe to delete\n"


def test_no_remote_cache_named_no_check(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("QK_REMOTE_CACHE_")}
    r, checks, _ = doctor(tmp_path, env)
    assert checks == {}, r.stdout


def test_no_token_says_so_and_what_to_set(servers, tmp_path):
    srv = servers("turbo")
    r, checks, fixes = doctor(tmp_path, srv.env(QK_REMOTE_CACHE_TOKEN=None))
    assert r.returncode == 1, r.stdout + r.stderr
    assert checks["remote-reach"].startswith("ok"), r.stdout
    assert checks["remote-token"].startswith("FAIL") and "no token: set QK_REMOTE_CACHE_TOKEN" in \
        checks["remote-token"], r.stdout
    assert "unexpected status" not in r.stdout
    assert fixes["remote-token"].startswith("set QK_REMOTE_CACHE_TOKEN"), r.stdout


def test_a_wrong_token_is_refused(servers, tmp_path):
    srv = servers("turbo")
    r, checks, fixes = doctor(tmp_path, srv.env(QK_REMOTE_CACHE_TOKEN="not-the-token"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert checks["remote-token"].startswith("FAIL") and "401" in checks["remote-token"], r.stdout
    assert "a token the server accepts" in fixes["remote-token"]


@pytest.mark.parametrize("kind", ["turbo", "bazel"])
def test_a_token_that_may_only_read_fails_the_write(servers, tmp_path, kind):
    # turborepo-remote-cache with READ_ONLY=true; nginx's /ro/ location refusing all but GET and HEAD.
    srv = servers("turbo", read_only=True) if kind == "turbo" else servers("bazel", location="ro")
    r, checks, fixes = doctor(tmp_path, srv.env())
    assert r.returncode == 1, r.stdout + r.stderr
    assert checks["remote-token"].startswith("ok"), r.stdout
    assert checks["remote-write"].startswith("FAIL") and "403" in checks["remote-write"], r.stdout
    assert "give them a token that may write" in fixes["remote-write"], r.stdout
    assert "remote-protocol" not in checks


def test_a_workspace_that_only_reads_is_not_asked_to_write(servers, tmp_path):
    srv = servers("turbo", read_only=True)
    ws = make_workspace(tmp_path / "ws", {"lib": {"root": "libs/lib", "targets": {"build": {"command": "true"}}}},
                        {}, nx={"qk": {"remoteCache": {"readOnly": True}}})
    r, checks, _ = doctor(ws, srv.env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert checks["remote-write"].startswith("-- not tried: runs here only read"), r.stdout
    assert checks["remote-protocol"].startswith("ok"), r.stdout


def test_nx_json_names_the_server(servers, tmp_path):
    srv = servers("turbo")
    env = srv.env()
    url = env.pop("QK_REMOTE_CACHE_URL")
    ws = make_workspace(tmp_path / "ws", {"lib": {"root": "libs/lib", "targets": {"build": {"command": "true"}}}},
                        {}, nx={"qk": {"remoteCache": {"url": url, "team": TEAM}}})
    env.pop("QK_REMOTE_CACHE_TEAM")
    r, checks, _ = doctor(ws, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert checks["remote-protocol"].startswith("ok"), r.stdout


def test_a_server_that_keeps_no_signatures_fails_the_protocol_with_the_fix(servers, tmp_path):
    # Without TURBO_REMOTE_CACHE_SIGNATURE_KEY the server stores no tag, and a signing client refuses
    # every entry it restores: met by doctor, not by the first run that shares nothing.
    srv = servers("turbo", signature_key=None)
    r, checks, fixes = doctor(tmp_path, srv.env())
    assert r.returncode == 1, r.stdout + r.stderr
    assert checks["remote-write"].startswith("ok"), r.stdout
    assert checks["remote-protocol"].startswith("FAIL") and "no x-artifact-tag" in checks["remote-protocol"]
    assert "TURBO_REMOTE_CACHE_SIGNATURE_KEY" in fixes["remote-protocol"], r.stdout


@pytest.mark.parametrize("kind", ["turbo", "bazel"])
def test_a_server_down_is_unreachable(servers, tmp_path, kind):
    srv = servers(kind)
    srv.stop()
    r, checks, fixes = doctor(tmp_path, srv.env())
    assert r.returncode == 1, r.stdout + r.stderr
    assert list(checks) == ["remote-reach"], r.stdout
    assert "the server is unreachable" in checks["remote-reach"], r.stdout
    assert fixes["remote-reach"].startswith("start the server, or correct the address"), r.stdout


def test_a_server_that_takes_the_connection_and_never_answers_is_stalled(tmp_path):
    # A real listener that accepts and says nothing: what a stopped or wedged server does.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("QK_REMOTE_CACHE_")}
        env.update(QK_REMOTE_CACHE_URL=f"http://127.0.0.1:{port}", QK_REMOTE_CACHE_TOKEN="t",
                   QK_REMOTE_CACHE_STALL_TIMEOUT="2")
        r, checks, fixes = doctor(tmp_path, env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "the server is stalled" in checks["remote-reach"] and "unreachable" not in checks["remote-reach"], r.stdout
    assert "did not answer" in fixes["remote-reach"], r.stdout


def test_the_wrong_protocol_is_said(servers, tmp_path):
    # turbo's API asked of nginx's WebDAV store: 404 is a miss to HEAD, but the PUT under /v8 is refused
    # (405: no PUT there), which is the protocol's answer, not the token's.
    srv = servers("bazel")
    env = srv.env(QK_REMOTE_CACHE_PROTOCOL="turbo", QK_REMOTE_CACHE_URL=f"http://127.0.0.1:{srv.port}/")
    r, checks, fixes = doctor(tmp_path, env)
    assert r.returncode == 1, r.stdout + r.stderr
    failed = [name for name, v in checks.items() if v.startswith("FAIL")]
    assert failed == ["remote-write"] or failed == ["remote-protocol"], r.stdout
    assert "QK_REMOTE_CACHE_PROTOCOL" in fixes[failed[0]], r.stdout


NGINX_USER_CONF = """
daemon off;
user nobody nogroup;
worker_processes 1;
error_log {tmp}/error.log;
pid {tmp}/nginx.pid;
events {{ worker_connections 16; }}
http {{
    access_log off;
    client_body_temp_path {store}/client_body;
    client_max_body_size 0;
    server {{
        listen 127.0.0.1:{port};
        location /cache/ {{
            root {store};
            dav_methods PUT DELETE MKCOL;
            create_full_put_path on;
        }}
    }}
}}
"""


@pytest.mark.privileged
def test_nginx_needs_its_worker_to_own_the_cache_directory(tmp_path):
    """docs/remote-cache.md's nginx setup, as a root master with a `nobody` worker: every PUT is 500 until
    the worker's user owns the cache directory, and doctor says so with the fix."""
    if os.geteuid() != 0:
        h.skip_or_fail("nginx's worker changes user only when its master runs as root")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        h.skip_or_fail("nginx is missing (scripts/setup installs Debian's nginx)")
    # Outside pytest's 0700 tmp_path, which the worker could not enter at all.
    store = Path(tempfile.mkdtemp(prefix="qk-nginx-store-"))
    try:
        store.chmod(0o755)
        (store / "cache").mkdir()
        (store / "client_body").mkdir()
        os.chown(store / "client_body", *owner_ids("nobody"))
        port = free_port()
        conf = tmp_path / "nginx.conf"
        conf.write_text(NGINX_USER_CONF.format(tmp=tmp_path, store=store, port=port))
        log = tmp_path / "nginx.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([nginx, "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(conf)],
                                    stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_listening(proc, port, log)
            env = {k: v for k, v in os.environ.items() if not k.startswith("QK_REMOTE_CACHE_")}
            env.update(QK_REMOTE_CACHE_URL=f"http://127.0.0.1:{port}/cache", QK_REMOTE_CACHE_PROTOCOL="bazel")
            r, checks, fixes = doctor(tmp_path, env)
            assert r.returncode == 1, r.stdout + r.stderr
            assert checks["remote-write"].startswith("FAIL") and "(500)" in checks["remote-write"], r.stdout
            assert "must own the cache directory" in checks["remote-write"], r.stdout
            assert "chown" in fixes["remote-write"], r.stdout
            assert "Permission denied" in (tmp_path / "error.log").read_text()
            # The docs' remedy: the worker's user owns the directory.
            os.chown(store / "cache", *owner_ids("nobody"))
            r, checks, _ = doctor(tmp_path, env)
            assert r.returncode == 0, r.stdout + r.stderr
            assert checks["remote-write"].startswith("ok") and checks["remote-protocol"].startswith("ok"), r.stdout
        finally:
            proc.send_signal(signal.SIGQUIT)  # the master stops its worker before it exits
            proc.wait(timeout=30)
    finally:
        shutil.rmtree(store, ignore_errors=True)


def owner_ids(user: str) -> tuple[int, int]:
    import pwd
    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid
