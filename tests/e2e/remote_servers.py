"""Real remote cache servers on 127.0.0.1 for the end-to-end tests: the npm turborepo-remote-cache server
(turbo's API, local storage; installed by scripts/turbo-cache-server, with the Node.js it needs) and Debian's
nginx with WebDAV (Bazel's HTTP cache), each started on a free port and stopped by the `servers` fixture."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

import qk_harness as h

TURBO_INSTALL = h.BUILD_DIR / "turbo-cache-server"

TOKEN = "tok-e2e-secret"
TEAM = "team_qk"
SIGNATURE_KEY = "sig-e2e-secret"
KEY = "0123456789abcdef0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc: subprocess.Popen, port: int, log: Path, timeout: float = 60):
    """Until the server accepts connections (its own start, not a timing of the test)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the server exited ({proc.returncode}) before listening:\n{log.read_text(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"the server did not listen on {port} within {timeout} s:\n{log.read_text(errors='replace')}")


class Server:
    kind = ""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log = tmp / "server.log"

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a stopped server would not die of SIGKILL's wait
            self.proc.kill()
        if self.proc:
            self.proc.wait(timeout=30)

    def env(self, **extra) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("QK_REMOTE_CACHE_")}
        env.update(self.client_env())
        env.update({k: str(v) for k, v in extra.items()})
        return {k: v for k, v in env.items() if v != "None"}


class TurboServer(Server):
    """turborepo-remote-cache with local storage under tmp/storage/<team>/<hash>."""

    kind = "turbo"

    def __init__(self, tmp: Path, signature_key: str | None = SIGNATURE_KEY, read_only: bool = False,
                 storage: Path | None = None, body_limit: int | None = None):
        super().__init__(tmp)
        self.storage = storage or tmp / "storage"
        self.storage.mkdir(exist_ok=True)
        node, entry = turbo_server_paths()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "STORAGE_PROVIDER": "local",
            "STORAGE_PATH": str(self.storage),
            "STORAGE_PATH_USE_TMP_FOLDER": "false",
            "TURBO_TOKEN": TOKEN,
            "LOG_LEVEL": "warn",
            "READ_ONLY": "true" if read_only else "false",
        }
        if body_limit is not None:
            env["BODY_LIMIT"] = str(body_limit)  # the largest entry it takes, in bytes: above it, 413
        if signature_key:
            env["TURBO_REMOTE_CACHE_SIGNATURE_KEY"] = signature_key  # the server then stores and serves tags
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([node, entry], env=env, stdout=log, stderr=subprocess.STDOUT)
        wait_listening(self.proc, self.port, self.log)

    def client_env(self) -> dict:
        return {
            "QK_REMOTE_CACHE_URL": f"http://127.0.0.1:{self.port}",
            "QK_REMOTE_CACHE_PROTOCOL": "turbo",
            "QK_REMOTE_CACHE_TOKEN": TOKEN,
            "QK_REMOTE_CACHE_TEAM": TEAM,
            "QK_REMOTE_CACHE_SIGNATURE_KEY": SIGNATURE_KEY,
        }

    def stored(self, key: str) -> Path:
        return self.storage / TEAM / key


NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
error_log {tmp}/error.log;
pid {tmp}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    client_max_body_size 0;
    server {{
        listen 127.0.0.1:{port};
        # Bazel's HTTP cache as nginx serves it: PUT writes the file, GET and HEAD read it.
        location /rw/ {{
            root {store};
            dav_methods PUT DELETE MKCOL;
            create_full_put_path on;
        }}
        # The same store for a token that may only read.
        location /ro/ {{
            alias {store}/rw/;
            limit_except GET HEAD {{ deny all; }}
        }}
        # The same store behind a bearer token.
        location /auth/ {{
            alias {store}/rw/;
            if ($http_authorization != "Bearer {token}") {{ return 401; }}
            dav_methods PUT;
            create_full_put_path on;
        }}
        location /fail/ {{ return 500; }}
        # The store served at 100 bytes a second: a server dripping an entry.
        location /drip/ {{ alias {store}/rw/; limit_rate 100; }}
        # A failure whose error page has no end worth reading (a sparse file of 1 TiB): a hostile server.
        location /endless/ {{ error_page 500 /endless-page; return 500; }}
        location = /endless-page {{ root {store}; internal; }}
    }}
}}
"""


class NginxServer(Server):
    """Debian's nginx as one process (master_process off: SIGSTOP stops all of it), store under tmp/store."""

    kind = "bazel"

    def __init__(self, tmp: Path, location: str = "rw"):
        super().__init__(tmp)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(nginx).exists():
            h.skip_or_fail("nginx is missing (scripts/setup installs Debian's nginx)")
        self.store = tmp / "store"
        (self.store / "rw").mkdir(parents=True, exist_ok=True)
        with open(self.store / "endless-page", "wb") as page:  # sparse: no disk is used
            page.truncate(1 << 40)
        self.location = location
        conf = tmp / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=tmp, port=self.port, store=self.store, token=TOKEN))
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([nginx, "-p", str(tmp), "-e", str(tmp / "error.log"), "-c", str(conf)],
                                         stdout=log, stderr=subprocess.STDOUT)
        wait_listening(self.proc, self.port, self.log)

    def client_env(self) -> dict:
        return {
            "QK_REMOTE_CACHE_URL": f"http://127.0.0.1:{self.port}/{self.location}",
            "QK_REMOTE_CACHE_PROTOCOL": "bazel",
        }

    def stored(self, key: str) -> Path:
        """The CAS blob the entry's pointer names."""
        ac = self.store / "rw" / "ac" / hashlib.sha256(f"qk-entry:{key}".encode()).hexdigest()
        digest = ac.read_text().split()[1]
        return self.store / "rw" / "cas" / digest


_turbo_paths: tuple[str, str] | None = None


def turbo_server_paths() -> tuple[str, str]:
    """scripts/turbo-cache-server's install (npm ci the first time, nothing after)."""
    global _turbo_paths
    if _turbo_paths is None:
        if not shutil.which("npm"):
            h.skip_or_fail("npm is missing (scripts/setup installs Debian's nodejs and npm)")
        r = subprocess.run([h.SOURCE_DIR / "scripts" / "turbo-cache-server", TURBO_INSTALL], capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        node, entry = r.stdout.split()
        _turbo_paths = (node, entry)
    return _turbo_paths


@pytest.fixture
def servers(tmp_path):
    """Starts servers in tmp_path; stops each at the end of the test."""
    started: list[Server] = []

    def start(kind: str, **options) -> Server:
        tmp = tmp_path / f"{kind}-{len(started)}"
        tmp.mkdir()
        server = TurboServer(tmp, **options) if kind == "turbo" else NginxServer(tmp, **options)
        started.append(server)
        return server

    yield start
    for s in started:
        s.stop()
