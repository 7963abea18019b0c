"""qk report html in a real browser: Debian's Chromium, headless, through ChromeDriver (Selenium) loads
the page of a report merged from two shards and the test reads the rendered DOM: a row per task, the
summary, filters that hide rows, a task's findings and fix opened from the keyboard, the page at a
phone's width without sideways scrolling. It saves docs/report-page.png when QK_SAVE_SCREENSHOT is set."""

from __future__ import annotations

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
    driver = _browser(390, 844)
    try:
        _load(driver, path)
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page scrolls sideways by {overflow}px at a phone's width"
        assert len(_visible_tasks(driver)) == len(doc["tasks"])
    finally:
        driver.quit()


def test_paths_that_look_like_markup_stay_text(page, tmp_path):
    """A file may be named `</script><b id=evil>.txt`: the page shows the name and runs none of it."""
    _, doc = page
    evil = '</script><b id="evil">x</b><img src=x onerror="document.title=1">.txt'
    doc = json.loads(json.dumps(doc))
    doc["tasks"]["a:build"]["findings"]["readsOutsideInputs"].append(evil)
    doc["tasks"]["a:build"]["findings"]["readsOutsideInputs"].sort()
    (tmp_path / "evil.json").write_text(json.dumps(doc))
    r = h_run_html(tmp_path / "evil.json", out=tmp_path / "evil.html")
    assert r.returncode == 0, r.stderr
    from selenium.webdriver.common.by import By
    driver = _browser(1280, 800)
    try:
        _load(driver, tmp_path / "evil.html")
        driver.find_element(By.CSS_SELECTOR, "[data-task='a:build'] button.task").click()
        assert driver.find_elements(By.ID, "evil") == [] and driver.title == "qk sandbox report"
        detail = driver.find_element(By.CSS_SELECTOR, "[data-task='a:build'] + .detail").text
        assert 'x</b><img src=x onerror="document.title=1">.txt' in detail, detail
    finally:
        driver.quit()
