"""The network in a recording, against real servers on 127.0.0.1: dnsmasq answering fetch.test, and
python's http.server. A task that looks fetch.test up with dig and fetches from the address it was given
with curl shows, under either recorder, the lookup, the connection to the HTTP server named fetch.test,
and the DNS server's endpoint, both in `loopback` (the machine's own, listed apart); a UDP datagram to
an address off the machine (192.0.2.1, TEST-NET-1: nothing answers, nothing needs to) is a connection;
a connect refused outright is listed as not reached. A connection's host is by address: every endpoint
at 127.0.0.1 is fetch.test's here, since its answer gave that address. Both engines record the same."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

import net_servers
import qk_harness as h

_free_port = net_servers.free_port


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """(dns_port, http_port): dnsmasq answering fetch.test with 127.0.0.1, and an HTTP server."""
    with net_servers.dns_and_http(Path(os.path.realpath(tmp_path_factory.mktemp("net-servers"))), "127.0.0.1") as ports:
        yield ports


def _trace(recorder: str, base: Path, servers) -> dict:
    dns_port, http_port = servers
    closed = _free_port(socket.SOCK_STREAM)  # bound and closed again: nothing listens there
    script = (
        f"ip=$(dig +short +tries=1 @127.0.0.1 -p {dns_port} fetch.test) && "
        f"curl -sf -o page.html http://$ip:{http_port}/index.html && "
        f"{sys.executable} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
        f".sendto(b'x', ('192.0.2.1', 9))\" && "
        f"{{ {sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {closed}))\" "
        f"2>/dev/null || true; }}"
    )
    work = base / "ws"
    work.mkdir()
    run = h.run_trace(["sh", "-c", script], recorder=recorder, cwd=work, json_path=base / "trace.json")
    assert run.returncode == 0, run.describe()
    assert (work / "page.html").read_text() == "hello\n"
    assert run.doc["complete"] is True, run.doc["incompleteReasons"]
    return run.doc, run.stderr, (dns_port, http_port, closed)


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_lookup_connection_and_loopback(recorder, servers, tmp_path):
    doc, stderr, (dns_port, http_port, closed) = _trace(recorder, Path(os.path.realpath(tmp_path)), servers)
    net = doc["network"]
    assert net["lookups"] == ["fetch.test"]
    loop = {(e["address"], e["port"], e["protocol"]): e for e in net["loopback"]}
    http = loop[("127.0.0.1", http_port, "tcp")]
    assert http["host"] == "fetch.test" and http["reached"] is True, http
    assert loop[("127.0.0.1", dns_port, "udp")]["reached"] is True
    refused = loop[("127.0.0.1", closed, "tcp")]
    assert refused["reached"] is False, refused  # a blocking connect refused outright
    assert set(loop) == {("127.0.0.1", http_port, "tcp"), ("127.0.0.1", dns_port, "udp"), ("127.0.0.1", closed, "tcp")}
    assert [(e["address"], e["port"], e["protocol"]) for e in net["connections"]] == [("192.0.2.1", 9, "udp")]
    assert "4 connections (3 loopback), 1 name looked up" in stderr, stderr


def test_engines_agree_on_the_network(servers, tmp_path):
    for recorder in h.RECORDERS:
        h.require_privileges(recorder)
    base = Path(os.path.realpath(tmp_path))
    seen = {}
    for recorder in h.RECORDERS:
        (base / recorder).mkdir()
        doc, _, ports = _trace(recorder, base / recorder, servers)

        def shape(entries):
            # the ports the fixture picked for this run's refused connect differ: named, not compared
            return sorted((e["address"], "closed" if e["port"] == ports[2] else str(e["port"]), e["protocol"],
                           e.get("host", ""), e["reached"]) for e in entries)

        seen[recorder] = {k: shape(doc["network"][k]) for k in ("connections", "loopback")}
        seen[recorder]["lookups"] = doc["network"]["lookups"]
    assert seen["strace"] == seen["ebpf"]
