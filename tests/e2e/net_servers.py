"""Real servers on 127.0.0.1 for the network's end-to-end tests: dnsmasq answering fetch.test with a given
address, and python's http.server serving a directory, each on a free port, waited for by asking it (its
readiness, not a time), stopped when the block ends."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest


def free_port(kind: int) -> int:
    """A port free on 127.0.0.1 for `kind` (socket.SOCK_STREAM or SOCK_DGRAM), bound and closed again."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, what: str, deadline: float = 20.0) -> None:
    """Polls `check` until it returns true: a server's readiness, not a time (a deadline only fails)."""
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"{what} did not come up within {deadline:.0f} s")
        time.sleep(0.05)


@contextlib.contextmanager
def dns_and_http(base: Path, answer: str) -> Iterator[tuple[int, int]]:
    """(dns_port, http_port): dnsmasq answering fetch.test with `answer`, and an HTTP server serving `base`
    (an index.html saying "hello")."""
    for tool in ("dnsmasq", "dig", "curl"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            pytest.fail(f"{tool} is missing: run scripts/setup (Debian: dnsmasq-base, bind9-dnsutils, curl)")
    (base / "index.html").write_text("hello\n")
    dns_port, http_port = free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_STREAM)
    dnsmasq = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
    procs = [
        subprocess.Popen([dnsmasq, "--keep-in-foreground", f"--port={dns_port}", "--listen-address=127.0.0.1",
                          "--bind-interfaces", "--no-resolv", "--no-hosts", f"--address=/fetch.test/{answer}",
                          f"--pid-file={base / 'dnsmasq.pid'}"], stderr=subprocess.DEVNULL),
        subprocess.Popen([sys.executable, "-m", "http.server", str(http_port), "--bind", "127.0.0.1",
                          "--directory", str(base)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    try:
        def dns_up() -> bool:
            r = subprocess.run(["dig", "+short", "+tries=1", "+time=1", "@127.0.0.1", "-p", str(dns_port),
                                "fetch.test"], capture_output=True, text=True)
            return r.stdout.strip() == answer

        def http_up() -> bool:
            try:
                socket.create_connection(("127.0.0.1", http_port), timeout=1).close()
                return True
            except OSError:
                return False

        wait_until(dns_up, "dnsmasq")
        wait_until(http_up, "http.server")
        yield dns_port, http_port
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)
