"""--sandbox=enforce holds the network a target declares (issue 42): `false` runs each command in a network
namespace of its own with loopback only; a list gives it one way out, the run's filtering proxy, which lets
through only the listed hosts and refuses the rest with a 403 naming the host and where to declare it. Real
servers on the host's 127.0.0.1 started by the test, real clients (curl, node, python's sockets). The host's
loopback is not the command's: a server there is reached only through the proxy, declared by its address."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest

import qk_harness as h
from audit_workspace import make_workspace, qk
from enforce_workspace import MODES, enforce, mode_env

pytestmark = pytest.mark.privileged

PY = "/usr/bin/python3"


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        body = f"hello from {self.server.server_address[1]} {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def servers():
    """Two HTTP servers on the host's 127.0.0.1: `allowed` (declared by the tasks) and `other` (never)."""
    started = []
    for _ in range(2):
        s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        started.append(s)
    yield {"allowed": started[0].server_address[1], "other": started[1].server_address[1]}
    for s in started:
        s.shutdown()


@pytest.fixture()
def udp_listener():
    """A UDP socket on the host's 127.0.0.1 that must hear nothing from a task."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.setblocking(False)
    yield s
    s.close()


def workspace(root: Path, network, command: str, files: dict[str, str] | None = None) -> Path:
    t = {"command": command, "inputs": ["{projectRoot}/src"], "outputs": ["{projectRoot}/dist"], "cache": False,
         "qk:sandbox": {"network": network}}
    base = {"src/main.txt": "main\n", ".gitignore": "dist\n"}
    base.update(files or {})
    return make_workspace(root, {"app": {"root": ".", "targets": {"t": t}}}, base)


def host_address() -> str | None:
    """An address of this machine other than loopback (the route out), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: only the route is looked up
            return s.getsockname()[0]
        except OSError:
            return None


@pytest.mark.parametrize("mode", MODES)
def test_a_declared_host_is_reached_through_the_proxy(mode, servers, tmp_path):
    port = servers["allowed"]
    command = f"mkdir -p dist && curl -sS -f http://127.0.0.1:{port}/declared -o dist/out.txt && env > dist/env.txt"
    ws = workspace(tmp_path / "ws", [f"127.0.0.1:{port}"], command)
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/out.txt").read_text() == f"hello from {port} /declared\n"
    env = dict(line.split("=", 1) for line in (ws / "dist/env.txt").read_text().splitlines() if "=" in line)
    proxy = env["HTTP_PROXY"]
    assert proxy.startswith("http://127.0.0.1:") and env["https_proxy"] == proxy and env["NODE_USE_ENV_PROXY"] == "1"
    assert doc["tasks"]["app:t"]["status"] == "enforced", doc


def test_node_reaches_a_declared_host_through_the_proxy(servers, tmp_path):
    # Node 20 does not read HTTP_PROXY itself (24 does with NODE_USE_ENV_PROXY=1): as npm's agent does, the
    # script sends the absolute URL to the proxy the variable names.
    port = servers["allowed"]
    script = ("const http = require('http'); const p = new URL(process.env.HTTP_PROXY);"
              f"http.get({{host: p.hostname, port: p.port, path: 'http://127.0.0.1:{port}/node'}}, r => {{"
              "let b = ''; r.on('data', d => b += d); r.on('end', () => {"
              "require('fs').writeFileSync('dist/node.txt', r.statusCode + ' ' + b); }); });")
    ws = workspace(tmp_path / "ws", [f"127.0.0.1:{port}"], "mkdir -p dist && node src/fetch.js",
                   {"src/fetch.js": script})
    r, _ = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "dist/node.txt").read_text() == f"200 hello from {port} /node\n"


@pytest.mark.parametrize("mode", MODES)
def test_an_undeclared_host_is_refused_and_listed(mode, servers, tmp_path):
    allowed, other = servers["allowed"], servers["other"]
    command = f"mkdir -p dist && curl -sS http://127.0.0.1:{other}/secret -o dist/out.txt -w '%{{http_code}}' > dist/code.txt"
    ws = workspace(tmp_path / "ws", [f"127.0.0.1:{allowed}"], command)
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert (ws / "dist/code.txt").read_text() == "403"
    body = (ws / "dist/out.txt").read_text()
    assert f"127.0.0.1:{other}" in body and "app:t" in body and '"qk:sandbox"' in body, body
    assert "hello" not in body
    task = doc["tasks"]["app:t"]
    assert task["findings"]["refusedNetwork"] == [f"127.0.0.1:{other}"], task
    # The summary names the task among those its declarations refused, the host under it, and once for the
    # run every host refused with its tasks.
    assert "did what its declarations refuse" in r.stdout and "\n  app:t\n" in r.stdout, r.stdout
    assert f"    1 connection refused by its declared network; to allow it, add its host:port to its " \
           f"\"qk:sandbox\": {{\"network\": [...]}}:\n      127.0.0.1:{other}\n" in r.stdout, r.stdout
    assert f"\n  1 host refused by declared networks: 127.0.0.1:{other} (app:t)\n" in r.stdout, r.stdout


@pytest.mark.parametrize("mode", MODES)
def test_network_false_gives_no_route_at_all(mode, servers, udp_listener, tmp_path):
    port = servers["allowed"]
    out_ip = host_address()
    udp_port = udp_listener.getsockname()[1]
    probe = (
        "import socket, os\n"
        "res = []\n"
        f"for host in ['127.0.0.1'] + ({out_ip!r} and [{out_ip!r}] or []):\n"
        "    s = socket.socket()\n"
        f"    try: s.connect((host, {port})); res.append('connected')\n"
        "    except OSError as e: res.append(type(e).__name__)\n"
        "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        f"try: u.sendto(b'out', ({out_ip or '192.0.2.1'!r}, {udp_port})); res.append('sent')\n"
        "except OSError as e: res.append(type(e).__name__)\n"
        # The interfaces of its own namespace (/sys/class/net shows the host's: sysfs was mounted there).
        "res.append(','.join(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:])))\n"
        "res.append(str(len(open('/proc/net/route').read().splitlines()) - 1))\n"
        "open('dist/net.txt', 'w').write(' '.join(res))\n"
    )
    ws = workspace(tmp_path / "ws", False, f"mkdir -p dist && {PY} src/probe.py && env > dist/env.txt",
                   {"src/probe.py": probe})
    r, doc = enforce(ws, "t", tmp_path / "r.json", mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    said = (ws / "dist/net.txt").read_text().split()
    # Its own loopback has nothing listening; any other address has no route; only lo, and no route.
    expected = ["ConnectionRefusedError"] + (["OSError"] if out_ip else []) + ["OSError", "lo", "0"]
    assert said == expected, said
    with pytest.raises(BlockingIOError):
        udp_listener.recv(64)
    assert "HTTP_PROXY" not in (ws / "dist/env.txt").read_text()
    task = doc["tasks"]["app:t"]
    assert task["status"] == "enforced"
    # What had no route, and the connection its own loopback refused (the machine's server was there without
    # the sandbox), are refusals: the task went on another way than it would have, and says so.
    refused = [f"127.0.0.1:{port}", f"{out_ip or '192.0.2.1'}:{udp_port}"] + ([f"{out_ip}:{port}"] if out_ip else [])
    assert sorted(task["findings"]["refusedNetwork"]) == sorted(refused), task
    assert "did what its declarations refuse" in r.stdout and "\n  app:t\n" in r.stdout, r.stdout


def test_ways_around_the_proxy_are_refused(servers, udp_listener, tmp_path):
    allowed, other = servers["allowed"], servers["other"]
    udp_port = udp_listener.getsockname()[1]
    out_ip = host_address() or "192.0.2.1"
    probe = (
        "import socket, os\n"
        "res = []\n"
        "proxy = int(os.environ['HTTP_PROXY'].rsplit(':', 1)[1])\n"
        # A raw connection to the server's address and to the machine's: the command's loopback has no server,
        # and Landlock (ABI 4) allows only the proxy's port.
        f"for host, port in [('127.0.0.1', {allowed}), ({out_ip!r}, {allowed})]:\n"
        "    s = socket.socket()\n"
        "    try: s.connect((host, port)); res.append('connected')\n"
        "    except OSError as e: res.append(f'{type(e).__name__}:{e.errno}')\n"
        "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        f"try: u.sendto(b'out', ({out_ip!r}, {udp_port})); res.append('sent')\n"
        "except OSError as e: res.append(f'{type(e).__name__}:{e.errno}')\n"
        # CONNECT to an unlisted host through the proxy itself, by hand.
        "s = socket.create_connection(('127.0.0.1', proxy))\n"
        f"s.sendall(b'CONNECT 127.0.0.1:{other} HTTP/1.1\\r\\nHost: 127.0.0.1:{other}\\r\\n\\r\\n')\n"
        "res.append(s.recv(4096).split(b'\\r\\n')[0].decode().replace(' ', '_'))\n"
        "open('dist/around.txt', 'w').write(' '.join(res))\n"
    )
    command = (f"mkdir -p dist && {PY} src/probe.py && "
               f"curl -sS -p -x \"$HTTP_PROXY\" http://127.0.0.1:{other}/tunnel -o dist/tunnel.txt "
               "-w '%{http_connect}' > dist/tunnel-code.txt; true")
    ws = workspace(tmp_path / "ws", [f"127.0.0.1:{allowed}"], command, {"src/probe.py": probe})
    r, doc = enforce(ws, "t", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    said = (ws / "dist/around.txt").read_text().split()
    import errno
    assert said[0] in (f"PermissionError:{errno.EACCES}", f"ConnectionRefusedError:{errno.ECONNREFUSED}"), said
    assert said[1] in (f"PermissionError:{errno.EACCES}", f"OSError:{errno.ENETUNREACH}"), said
    assert said[2] == f"OSError:{errno.ENETUNREACH}", said
    assert said[3] == "HTTP/1.1_403_Forbidden", said
    with pytest.raises(BlockingIOError):
        udp_listener.recv(64)
    # curl's CONNECT (-p) to the unlisted host: refused by the proxy with its 403.
    assert (ws / "dist/tunnel-code.txt").read_text() == "403"
    # The proxy's refusal, and each way around it, which its namespace and Landlock held: all named.
    refused = {f"127.0.0.1:{other}", f"127.0.0.1:{allowed}", f"{out_ip}:{allowed}", f"{out_ip}:{udp_port}"}
    assert set(doc["tasks"]["app:t"]["findings"]["refusedNetwork"]) == refused, doc


def test_a_task_cannot_reach_another_runs_proxy(servers, tmp_path):
    """Run 1's task waits on a fifo while run 2's task tries run 1's proxy socket, by the path the test
    found from outside: the run's directory is covered in every command's view (and run 1's listener lives
    in run 1's command's network namespace, which nothing else shares)."""
    allowed = servers["allowed"]
    go = tmp_path / "go"
    os.mkfifo(go)
    ws1 = workspace(tmp_path / "ws1", [f"127.0.0.1:{allowed}"], f"mkdir -p dist && cat {go} > dist/done.txt")
    e = dict(os.environ, **mode_env("overlay"))
    proc = subprocess.Popen([str(h.BUILD_DIR / "qk"), "run-many", "-t", "t", "--sandbox=enforce"], cwd=ws1,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e)
    fd = h.open_when_read(go, proc)
    try:
        # The unix sockets bound on the machine, by path: run 1's proxy is listening on its own.
        sockets = sorted({line.split()[-1] for line in Path("/proc/net/unix").read_text().splitlines()[1:]
                          if line.split()[-1].endswith("/network-proxy")})
        assert sockets, "run 1's proxy socket not found"
        probe = (
            "import socket, sys\n"
            "res = []\n"
            "for path in sys.argv[1:]:\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    try: s.connect(path); res.append('connected')\n"
            "    except OSError as e: res.append(type(e).__name__)\n"
            "open('dist/other.txt', 'w').write(' '.join(res))\n"
        )
        ws2 = workspace(tmp_path / "ws2", [f"127.0.0.1:{allowed}"],
                        f"mkdir -p dist && {PY} src/probe.py {' '.join(sockets)}", {"src/probe.py": probe})
        r, _ = enforce(ws2, "t", tmp_path / "r2.json")
        assert r.returncode == 0, r.stdout + r.stderr
        said = (ws2 / "dist/other.txt").read_text().split()
        assert said and "connected" not in said, said
    finally:
        os.write(fd, b"go\n")
        os.close(fd)
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert (ws1 / "dist/done.txt").read_text() == "go\n"
