"""The audit's network findings and what the run makes of a declared network (issue 42), against real
servers on 127.0.0.1 (dnsmasq answering fetch.test with a TEST-NET address, python's http.server) and the
real remote cache server: a task that looks fetch.test up and connects a UDP socket to the address it got
(a connect sends nothing: no packet leaves the machine) reaches fetch.test:9 off the machine, and the DNS
and HTTP servers on its own loopback. Undeclared, that is listed and not counted; outside a declared false
or list it goes beyond, qk report check fails, qk report fix writes the declaration and check passes; the
report page shows it; a task declaring its network is said to be unreproducible by its key, and
uploadNetwork: false keeps its result from the server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import net_servers
import qk_harness as h
from audit_workspace import make_workspace, qk
from remote_servers import servers  # noqa: F401

pytestmark = pytest.mark.privileged

PY = "/usr/bin/python3"
FAR = "198.51.100.7"  # TEST-NET-2: what dnsmasq answers for fetch.test; nothing is sent there
CONNECT = f"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(('{FAR}', 9)); s.close()\n"


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """(dns_port, http_port): dnsmasq answering fetch.test with FAR, and an HTTP server, on 127.0.0.1."""
    with net_servers.dns_and_http(Path(os.path.realpath(tmp_path_factory.mktemp("net-servers"))), FAR) as ports:
        yield ports


def fetching(root: Path, net, network=None, nx: dict | None = None) -> Path:
    """One project whose `fetch` looks fetch.test up, connects to it, and fetches from the HTTP server."""
    dns, http = net
    command = (f"mkdir -p dist && dig +short +tries=1 @127.0.0.1 -p {dns} fetch.test > dist/ip.txt && "
               f"{PY} src/connect.py && curl -sS -f http://127.0.0.1:{http}/index.html -o dist/page.html")
    t = {"command": command, "inputs": ["{projectRoot}/src"], "outputs": ["{projectRoot}/dist"], "cache": False}
    if network is not None:
        t["qk:sandbox"] = {"network": network}
    files = {"src/connect.py": CONNECT, ".gitignore": "dist\n"}
    return make_workspace(root, {"app": {"root": ".", "targets": {"fetch": t}}}, files, nx=nx)


def audit(ws: Path, recorder: str = "ebpf"):
    report = ws.parent / f"{ws.name}-report.json"
    r = qk(ws, "run-many", "-t", "fetch", "--sandbox", "--sandbox-report", str(report), recorder=recorder)
    assert r.returncode == 0, r.stdout + r.stderr
    import sandbox_report
    return r, sandbox_report.checked(json.loads(report.read_text())), report


@pytest.mark.parametrize("recorder", ["ebpf", "strace"])
def test_an_undeclared_network_is_listed_not_counted(recorder, net, tmp_path):
    h.require_privileges(recorder)
    dns, http = net
    ws = fetching(tmp_path / "ws", net)
    r, doc, _ = audit(ws, recorder)
    task = doc["tasks"]["app:fetch"]
    f = task["findings"]
    assert f["network"] == ["fetch.test:9"], task
    assert {f"127.0.0.1:{dns}", f"127.0.0.1:{http}"} <= set(f["loopbackNetwork"]), task
    assert "undeclaredNetwork" not in f
    assert doc["summary"]["wentBeyond"] == 0, doc["summary"]
    # What stands behind the entry: the address it connected to, by UDP, and the name it looked up.
    behind = [c for c in task["connections"] if c["entry"] == "fetch.test:9"]
    assert behind == [{"entry": "fetch.test:9", "address": FAR, "port": 9, "protocol": "udp", "host": "fetch.test",
                       "count": 1, "reached": True}], task["connections"]
    assert "Sandbox audit: 1 task kept to what it declares" in r.stdout, r.stdout
    assert ("  reached on the network, which the declared networks allow: fetch.test:9 (1 task: app:fetch)\n"
            in r.stdout), r.stdout
    loopback = [line for line in r.stdout.splitlines()
                if line.startswith("  reached on their own machine (loopback), not judged: ")]
    assert len(loopback) == 1 and f"127.0.0.1:{dns} (1 task: app:fetch)" in loopback[0], r.stdout
    assert f"127.0.0.1:{http} (1 task: app:fetch)" in loopback[0], r.stdout
    # Undeclared, the run says nothing of keys: only a declared network is said to be outside them.
    assert "declare their network" not in r.stdout


@pytest.mark.parametrize("declared, fixed", [(False, ["fetch.test:9"]), (["fetch.test:53"], ["fetch.test:53", "fetch.test:9"])])
def test_outside_a_declaration_counts_check_fails_and_fix_writes_it(declared, fixed, net, tmp_path):
    h.require_privileges("ebpf")
    ws = fetching(tmp_path / "ws", net, network=declared)
    rules = qk(ws, "show", "task", "app:fetch", "--rules")
    assert rules.returncode == 0, rules.stdout + rules.stderr
    said = "its own loopback only" if declared is False else "fetch.test:53"
    assert said in rules.stdout and "undeclaredNetwork" in rules.stdout, rules.stdout
    r, doc, report = audit(ws)
    task = doc["tasks"]["app:fetch"]
    assert task["findings"]["undeclaredNetwork"] == ["fetch.test:9"], task
    assert "network" not in task["findings"], task
    assert doc["summary"]["wentBeyond"] == 1
    assert {"finding": "undeclaredNetwork", "declare": "network", "values": ["fetch.test:9"]} in task["suggestions"]
    assert "    1 host reached outside its declared network:\n      fetch.test:9\n" in r.stdout, r.stdout
    assert '      "qk:sandbox": {"network": ["fetch.test:9"]} (added to its list)\n' in r.stdout, r.stdout

    check = qk(ws, "report", "check", str(report))
    assert check.returncode == 1, check.stdout + check.stderr
    assert "still unexpected:\n      undeclaredNetwork: fetch.test:9\n" in check.stdout, check.stdout

    fix = qk(ws, "report", "fix", str(report), "--write")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert "wrote project.json" in fix.stdout, fix.stdout + fix.stderr
    written = json.loads((ws / "project.json").read_text())
    assert written["targets"]["fetch"]["qk:sandbox"] == {"network": fixed}, written

    check = qk(ws, "report", "check", str(report))
    assert check.returncode == 0, check.stdout + check.stderr
    assert "keeps to today's declarations" in check.stdout, check.stdout
    # Run again: what it reached is declared now, listed and not counted.
    _, doc, _ = audit(ws)
    assert doc["tasks"]["app:fetch"]["findings"]["network"] == ["fetch.test:9"], doc["tasks"]["app:fetch"]
    assert doc["summary"]["wentBeyond"] == 0
    # And fix has nothing more to write.
    again = qk(ws, "report", "fix", str(report))
    assert again.stdout == "" and "nothing to write" in again.stderr, again.stdout + again.stderr


def test_fix_declares_an_open_network_only_when_asked(net, tmp_path):
    h.require_privileges("ebpf")
    ws = fetching(tmp_path / "ws", net)
    before = (ws / "project.json").read_text()
    _, doc, report = audit(ws)
    assert doc["tasks"]["app:fetch"]["findings"]["network"] == ["fetch.test:9"]
    plain = qk(ws, "report", "fix", str(report), "--write")
    assert plain.returncode == 0 and (ws / "project.json").read_text() == before, plain.stdout + plain.stderr
    fix = qk(ws, "report", "fix", str(report), "--declare-network", "--write")
    assert fix.returncode == 0 and "wrote project.json" in fix.stdout, fix.stdout + fix.stderr
    written = json.loads((ws / "project.json").read_text())
    # What it reached off the machine; its loopback (the DNS and HTTP servers) is its own and not listed.
    assert written["targets"]["fetch"]["qk:sandbox"] == {"network": ["fetch.test:9"]}, written
    _, doc, report = audit(ws)
    assert doc["tasks"]["app:fetch"]["findings"]["network"] == ["fetch.test:9"] and doc["summary"]["wentBeyond"] == 0
    again = qk(ws, "report", "fix", str(report), "--declare-network")
    assert again.stdout == "" and "nothing to write" in again.stderr, again.stdout + again.stderr


def test_the_page_shows_the_network_and_the_declaration_to_paste(net, tmp_path):
    h.require_privileges("ebpf")
    from selenium.webdriver.common.by import By

    from test_report_page import _opened, h_run_html
    ws = fetching(tmp_path / "ws", net, network=False)
    _, _, report = audit(ws)
    r = h_run_html(report, out=tmp_path / "report.html")
    assert r.returncode == 0, r.stderr
    with _opened(tmp_path / "report.html") as driver:
        row = driver.find_element(By.CSS_SELECTOR, "[data-task='app:fetch']")
        assert "went beyond" in row.text, row.text
        row.find_element(By.CSS_SELECTOR, "button.task").click()
        detail = driver.find_element(By.CSS_SELECTOR, "[data-task='app:fetch'] + .detail")
        headings = [e.text for e in detail.find_elements(By.TAG_NAME, "h3")]
        assert "1 host reached outside its declared network undeclaredNetwork" in headings, headings
        assert any(x.startswith("port") or "reached on its own machine" in x for x in headings), headings
        entries = {e.find_element(By.CSS_SELECTOR, "code.path").text:
                   e.find_element(By.CSS_SELECTOR, ".connection").get_attribute("textContent")
                   for e in detail.find_elements(By.CSS_SELECTOR, "li.finding")}
        assert entries["fetch.test:9"] == f"udp {FAR}:9, once", entries
        snippets = [e.text for e in detail.find_elements(By.CSS_SELECTOR, ".snippet pre")]
        assert snippets == ['"qk:sandbox": {"network": ["fetch.test:9"]}'], snippets


def _remote_workspace(root: Path, upload_network) -> Path:
    """Two cached builds: `fetch` declares its network (true), `make` does not; both clean."""
    remote = {} if upload_network is None else {"uploadNetwork": upload_network}
    nx = {"namedInputs": {"default": ["{projectRoot}/**/*"]}, "targetDefaults": {"build": {"cache": True}},
          "qk": {"remoteCache": remote}}
    projects = {
        name: {"root": f"libs/{name}", "targets": {"build": {
            "command": f"mkdir -p libs/{name}/dist && cat libs/{name}/src/a.txt > libs/{name}/dist/out.txt",
            "outputs": ["{projectRoot}/dist"], **extra}}}
        for name, extra in (("fetch", {"qk:sandbox": {"network": True}}), ("make", {}))}
    files = {"libs/fetch/src/a.txt": "fetch\n", "libs/make/src/a.txt": "make\n", ".gitignore": "dist/\n"}
    return make_workspace(root, projects, files, nx=nx)


def _remote_block(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  remote ("))
    block = [lines[start].split("): ", 1)[1]]
    for more in lines[start + 1:]:
        if not more.startswith("    "):
            break
        block.append(more.strip())
    return block


@pytest.mark.parametrize("upload_network", [False, None])
def test_upload_network_false_keeps_results_of_tasks_declaring_their_network(upload_network, servers, tmp_path):  # noqa: F811
    h.require_privileges("ebpf")
    srv = servers("turbo")
    ws = _remote_workspace(tmp_path / "ws", upload_network)
    r = qk(ws, "run-many", "-t", "build", "--sandbox", env=srv.env(), recorder="ebpf")
    assert r.returncode == 0, r.stdout + r.stderr
    # Said once, counted, whatever the policy: the key does not hold what it fetched.
    assert r.stdout.count("declare their network") == 1, r.stdout
    assert ("  1 result of tasks that declare their network (\"qk:sandbox\": {\"network\": true or a list}): its "
            "key alone does not reproduce it") in r.stdout, r.stdout
    block = _remote_block(r.stdout)
    if upload_network is False:
        assert block == ["0 restored, 2 not on the server; uploaded 1",
                         "1 result kept local: its task declares its network, so a key alone does not reproduce it, "
                         "and nx.json's qk.remoteCache.uploadNetwork is false"], r.stdout
    else:
        assert block == ["0 restored, 2 not on the server; uploaded 2"], r.stdout
    # What the server holds is what the block says: a fresh checkout restores only what was sent.
    other = _remote_workspace(tmp_path / "other", upload_network)
    report = tmp_path / "other-run.json"
    r = qk(other, "run-many", "-t", "build", "--report", str(report), env=srv.env())
    assert r.returncode == 0, r.stdout + r.stderr
    sources = {t: v["source"] for t, v in json.loads(report.read_text())["tasks"].items()}
    assert sources == {"make:build": "restoredRemote",
                       "fetch:build": "ran" if upload_network is False else "restoredRemote"}, r.stdout


def test_upload_network_takes_true_or_false_and_says_where(tmp_path):
    ws = _remote_workspace(tmp_path / "ws", "no")
    r = qk(ws, "run-many", "-t", "build")
    assert r.returncode != 0
    assert "nx.json:" in r.stderr and "qk.remoteCache.uploadNetwork must be true or false" in r.stderr, r.stderr
