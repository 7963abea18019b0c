"""qk report html in a real browser: Debian's Chromium, headless, through ChromeDriver (Selenium) loads
the page of a report merged from two shards and the test reads the rendered DOM: a row per task, the
summary, filters that hide rows, the finding kinds in words, who saw each task, a task's findings and
the fix to paste opened from the keyboard, the page at a phone's width without sideways scrolling, and
hostile names shown as text. It saves docs/report-page.png when QK_SAVE_SCREENSHOT is set."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import pytest

import qk_harness as h
from test_report_merge import merge, run_shard, shard_workspace

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def _browser(width: int, height: int):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        h.skip_or_fail("python3-selenium is not installed (scripts/setup installs it)")
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        h.skip_or_fail("chromium and chromium-driver are not installed (scripts/setup installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A page of two shards' merged report: shard 0 ran a and b with eBPF, shard 1 c and d with strace."""
    h.require_privileges("ebpf")
    base = Path(os.path.realpath(tmp_path_factory.mktemp("page")))
    first = shard_workspace(base / "one")
    second = shard_workspace(base / "two")
    (second / "libs/d/extra.sh").write_text("echo made > stray.txt\n")
    project = json.loads((second / "libs/d/project.json").read_text())
    project["targets"]["build"]["command"] += " && sh libs/d/extra.sh"
    (second / "libs/d/project.json").write_text(json.dumps(project))
    run_shard(first, base / "s0.json", "a,b", "0", "ebpf")
    run_shard(second, base / "s1.json", "c,d", "1", "strace")
    r = h_run_html(base / "s0.json", base / "s1.json", out=base / "report.html")
    assert r.returncode == 0, r.stderr
    assert merge(base / "s0.json", base / "s1.json", out=base / "run.json").returncode == 0
    return base / "report.html", json.loads((base / "run.json").read_text())


def h_run_html(*reports: Path, out: Path):
    import subprocess
    return subprocess.run([str(h.BUILD_DIR / "qk"), "report", "html", *map(str, reports), "-o", str(out)],
                          capture_output=True, text=True, timeout=60)


def _load(driver, path: Path) -> None:
    """Opens the page and waits until its script has drawn it (it marks the document ready)."""
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get(path.as_uri())
    WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.documentElement.dataset.ready"))


@contextlib.contextmanager
def _opened(path: Path, width: int = 1280, height: int = 800):
    """The page loaded and drawn in a browser, closed after."""
    driver = _browser(width, height)
    try:
        _load(driver, path)
        yield driver
    finally:
        driver.quit()


def _visible_tasks(driver) -> list[str]:
    return driver.execute_script(
        "return [...document.querySelectorAll('.task-row')].filter(r => !r.hidden).map(r => r.dataset.task)")


def test_the_page_is_self_contained(page):
    html = page[0].read_text()
    assert "http://" not in html and "https://" not in html, "the page must load nothing from the network"
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_rows_summary_filters_and_keyboard_in_chromium(page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    path, doc = page
    driver = _browser(1280, 800)
    try:
        _load(driver, path)
        assert _visible_tasks(driver) == sorted(doc["tasks"])
        assert driver.find_element(By.ID, "count").text == "4 of 4 tasks shown"
        cards = {c.find_element(By.TAG_NAME, "span").text: c.find_element(By.TAG_NAME, "b").text
                 for c in driver.find_elements(By.CSS_SELECTOR, "#summary .card")}
        assert cards["tasks"] == "4" and cards["went beyond"] == str(doc["summary"]["wentBeyond"])
        meta = driver.find_element(By.ID, "meta").text
        assert "run run-7" in meta and "shards 0, 1" in meta and "recorder mixed" in meta, meta
        many = driver.find_element(By.ID, "many-body").text
        assert "tools/config.txt — 4 tasks" in many, many

        # Filter by kind: only d:build wrote outside its outputs.
        Select(driver.find_element(By.ID, "f-kind")).select_by_value("strayWrites")
        assert _visible_tasks(driver) == ["d:build"]
        assert driver.find_element(By.ID, "count").text == "1 of 4 tasks shown"
        Select(driver.find_element(By.ID, "f-kind")).select_by_value("")
        # Filter by project, then by a path typed in.
        Select(driver.find_element(By.ID, "f-project")).select_by_value("b")
        assert _visible_tasks(driver) == ["b:build"]
        Select(driver.find_element(By.ID, "f-project")).select_by_value("")
        driver.find_element(By.ID, "f-text").send_keys("stray.txt")
        assert _visible_tasks(driver) == ["d:build"]
        driver.find_element(By.ID, "f-text").send_keys(Keys.CONTROL, "a")
        driver.find_element(By.ID, "f-text").send_keys(Keys.DELETE)
        assert len(_visible_tasks(driver)) == 4

        # From the keyboard: a task's button, focused, opens its findings and fix with Enter, closes with Space.
        button = driver.find_element(By.CSS_SELECTOR, "[data-task='d:build'] button.task")
        driver.execute_script("arguments[0].focus()", button)
        assert driver.switch_to.active_element == button
        button.send_keys(Keys.ENTER)
        assert button.get_attribute("aria-expanded") == "true"
        detail = driver.find_element(By.CSS_SELECTOR, "[data-task='d:build'] + .detail")
        text = detail.text
        assert "stray.txt" in text and "tools/config.txt" in text, text
        assert '"outputs": ["{workspaceRoot}/stray.txt"]' in text, text  # the suggested fix
        assert "strace" in text and "recorder" in text, text  # provenance: shard 1 recorded it with strace
        button.send_keys(Keys.SPACE)
        assert not detail.is_displayed()
        if os.environ.get("QK_SAVE_SCREENSHOT"):
            button.send_keys(Keys.ENTER)
            driver.save_screenshot(str(h.SOURCE_DIR / "docs" / "report-page.png"))
    finally:
        driver.quit()


def test_the_page_fits_a_phone(page):
    path, doc = page
    with _opened(path, 390, 844) as driver:
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page scrolls sideways by {overflow}px at a phone's width"
        assert len(_visible_tasks(driver)) == len(doc["tasks"])


def test_paths_that_look_like_markup_stay_text(page, tmp_path):
    """A file may be named `</script><b id=evil>.txt`: the page shows the name and runs none of it."""
    _, doc = page
    evil = '</script><b id="evil">x</b><img src=x onerror="document.title=1">\x1b]0;owned\x07\u202e.txt'
    doc = json.loads(json.dumps(doc))
    task = doc["tasks"]["a:build"]
    task["findings"]["readsOutsideInputs"].append(evil)
    task["findings"]["readsOutsideInputs"].sort()
    task["suggestions"] = [{"finding": "readsOutsideInputs", "declare": "inputs", "values": ["{workspaceRoot}/" + evil]}]
    (tmp_path / "evil.json").write_text(json.dumps(doc))
    r = h_run_html(tmp_path / "evil.json", out=tmp_path / "evil.html")
    assert r.returncode == 0, r.stderr
    from selenium.webdriver.common.by import By
    driver = _browser(1280, 800)
    try:
        _load(driver, tmp_path / "evil.html")
        driver.find_element(By.CSS_SELECTOR, "[data-task='a:build'] button.task").click()
        assert driver.find_elements(By.ID, "evil") == [] and driver.title == "qk sandbox report"
        detail = driver.find_element(By.CSS_SELECTOR, "[data-task='a:build'] + .detail")
        shown = 'x</b><img src=x onerror="document.title=1">\\x1b]0;owned\\x07\\u202e.txt'
        assert shown in detail.text, detail.text  # the controls as qk::printable writes them
        snippet = detail.find_element(By.CSS_SELECTOR, ".snippet pre").text
        assert snippet == ('"inputs": ["{workspaceRoot}/</script><b id=\\"evil\\">x</b><img src=x '
                        'onerror=\\"document.title=1\\">\\u001b]0;owned\\u0007\\u202e.txt"]'), snippet
        assert json.loads("{" + snippet + "}")["inputs"] == ["{workspaceRoot}/" + evil]  # pasted, the same name
    finally:
        driver.quit()


def _cells(driver, css: str) -> dict[str, list[str]]:
    """Each task's texts of the elements `css` selects in its row."""
    return driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('.task-row')].map(r =>"
        " [r.dataset.task, [...r.querySelectorAll(arguments[0])].map(e => e.textContent)]))", css)


def test_chips_say_the_kinds_in_words_and_seen_by_names_shard_and_recorder(page):
    from selenium.webdriver.common.by import By
    path, doc = page
    with _opened(path) as driver:
        chips = _cells(driver, ".chip")
        # d:build read the shared file and wrote stray.txt; a:build only read it: the summary's words.
        assert chips["d:build"] == ["1 read outside its inputs", "1 written outside its outputs"], chips
        assert chips["a:build"] == ["1 read outside its inputs"], chips
        for texts in chips.values():
            assert not any(w in t for t in texts for w in ("Inputs", "Outputs", "Writes", "Reads")), texts
        options = [o.text for o in driver.find_elements(By.CSS_SELECTOR, "#f-kind option")]
        assert options == ["any", "reads outside its inputs", "written outside its outputs"], options
        seen = {t: c[0] for t, c in _cells(driver, ".seen-by").items()}
        assert seen == {"a:build": "shard 0 · eBPF", "b:build": "shard 0 · eBPF",
                        "c:build": "shard 1 · strace", "d:build": "shard 1 · strace"}, seen


def test_seen_by_without_a_shard_or_a_recorder(page, tmp_path):
    """A task recorded where no shard is known shows its recorder alone; one neither recorded nor
    sharded an empty cell, never '- · ebpf' or 'null'."""
    _, doc = page
    doc = json.loads(json.dumps(doc))
    doc["tasks"]["b:build"]["provenance"]["shard"] = None
    doc["tasks"]["c:build"] = {"status": "restored", "hash": doc["tasks"]["c:build"]["hash"],
                               "provenance": {**doc["tasks"]["c:build"]["provenance"], "shard": None, "recorder": None}}
    doc["tasks"]["d:build"]["provenance"]["shard"] = "2"
    (tmp_path / "seen.json").write_text(json.dumps(doc))
    r = h_run_html(tmp_path / "seen.json", out=tmp_path / "seen.html")
    assert r.returncode == 0, r.stderr
    with _opened(tmp_path / "seen.html") as driver:
        seen = {t: c[0] for t, c in _cells(driver, ".seen-by").items()}
        assert seen == {"a:build": "shard 0 · eBPF", "b:build": "eBPF", "c:build": "", "d:build": "shard 2 · strace"}, seen


def test_an_opened_row_lists_each_path_under_its_kind_and_the_fix_to_paste(page):
    from selenium.webdriver.common.by import By
    path, doc = page
    with _opened(path) as driver:
        assert driver.find_elements(By.CSS_SELECTOR, ".detail") == [], "details are made when a row opens"
        driver.find_element(By.CSS_SELECTOR, "[data-task='d:build'] button.task").click()
        detail = driver.find_element(By.CSS_SELECTOR, "[data-task='d:build'] + .detail")
        assert len(driver.find_elements(By.CSS_SELECTOR, ".detail")) == 1
        headings = [e.text for e in detail.find_elements(By.TAG_NAME, "h3")]
        assert headings[:2] == ["1 read outside its inputs readsOutsideInputs",
                                "1 written outside its outputs strayWrites"], headings
        findings = detail.find_elements(By.CSS_SELECTOR, "li.finding")
        assert [f.find_element(By.CSS_SELECTOR, "code.path").text for f in findings] == ["tools/config.txt", "stray.txt"]
        # Each finding names the process behind it, as the report holds it: its command, then its parents'.
        procs = doc["tasks"]["d:build"].get("processes", {})
        assert procs.get("tools/config.txt"), doc["tasks"]["d:build"]
        slots = [f.find_element(By.CSS_SELECTOR, "[data-slot=process]") for f in findings]
        want = ["".join(("by " if i == 0 else "\u2190 ") + cmd for i, cmd in enumerate(procs.get(p, [])))
                for p in ("tools/config.txt", "stray.txt")]
        assert [s.get_attribute("textContent") for s in slots] == want
        snippets = [e.text for e in detail.find_elements(By.CSS_SELECTOR, ".snippet pre")]
        assert snippets == ['"inputs": ["{workspaceRoot}/tools/config.txt"],\n"outputs": ["{workspaceRoot}/stray.txt"]',
                            '"qk:ultracache": {"ignoreReads": ["{workspaceRoot}/tools/config.txt"]}'], snippets
        assert json.loads("{" + snippets[0] + "}") == {"inputs": ["{workspaceRoot}/tools/config.txt"],
                                                       "outputs": ["{workspaceRoot}/stray.txt"]}
        # The copy button copies, or selects the snippet where the page may not write the clipboard.
        button = detail.find_element(By.CSS_SELECTOR, ".snippet button.copy")
        button.click()
        # The clipboard answers through a promise: the label changes when it has, not at the click.
        from selenium.webdriver.support.ui import WebDriverWait
        WebDriverWait(driver, 20).until(lambda d: button.text != "Copy")
        assert button.text in ("Copied", "Selected: Ctrl+C"), button.text
        assert driver.execute_script("return document.documentElement.dataset.ready") == "true"


def test_an_opened_row_lists_the_declared_inputs_no_recorded_run_read(page, tmp_path):
    from selenium.webdriver.common.by import By
    _, doc = page
    doc = json.loads(json.dumps(doc))
    doc["tasks"]["a:build"]["inputsNeverRead"] = ["libs/a/README.md", "libs/a/<b>old</b>.txt"]
    (tmp_path / "never.json").write_text(json.dumps(doc))
    r = h_run_html(tmp_path / "never.json", out=tmp_path / "never.html")
    assert r.returncode == 0, r.stderr
    with _opened(tmp_path / "never.html") as driver:
        driver.find_element(By.CSS_SELECTOR, "[data-task='a:build'] button.task").click()
        detail = driver.find_element(By.CSS_SELECTOR, "[data-task='a:build'] + .detail")
        headings = [e.text for e in detail.find_elements(By.TAG_NAME, "h3")]
        assert "2 declared inputs no recorded run read" in headings, headings
        listed = [e.text for e in detail.find_elements(By.CSS_SELECTOR, "ul.never-read code.path")]
        assert listed == ["libs/a/README.md", "libs/a/<b>old</b>.txt"], listed


def test_the_project_filter_names_each_tasks_project_as_the_report_does(tmp_path):
    """Issue 39: target names hold colons (`test:types`) and project names may not (`root`): the filter
    takes the report's project field, not the id split at a colon."""
    from audit_workspace import make_workspace, qk
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    h.require_privileges("ebpf")
    ws = make_workspace(tmp_path / "ws", {
        "@s/p": {"root": "packages/p", "targets": {"test:types": {"command": "cat notes.txt"}}},
        "root": {"root": ".", "targets": {"lint": {"command": "cat notes.txt"}}},
    }, {"notes.txt": "notes\n"})
    report = tmp_path / "r.json"
    r = qk(ws, "run-many", "-t", "test:types,lint", "--sandbox", "--sandbox-report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    tasks = json.loads(report.read_text())["tasks"]
    assert {t: v["project"] for t, v in tasks.items()} == {"@s/p:test:types": "@s/p", "root:lint": "root"}
    assert h_run_html(report, out=tmp_path / "r.html").returncode == 0
    driver = _browser(1280, 800)
    try:
        _load(driver, tmp_path / "r.html")
        options = [o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#f-project option")]
        assert options == ["", "@s/p", "root"], options
        Select(driver.find_element(By.ID, "f-project")).select_by_value("root")
        assert _visible_tasks(driver) == ["root:lint"]
        Select(driver.find_element(By.ID, "f-project")).select_by_value("@s/p")
        assert _visible_tasks(driver) == ["@s/p:test:types"]
    finally:
        driver.quit()
