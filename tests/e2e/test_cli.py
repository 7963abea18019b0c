"""The command lines themselves: --version, usage lines that name the program, usage when no command is
given; and scripts/test-summary, which counts what the suites ran."""

from __future__ import annotations

import re
import subprocess

import qk_harness as h
from audit_workspace import QK

VERSION = re.search(r"project\(qk_sandbox VERSION ([0-9.]+)", (h.SOURCE_DIR / "CMakeLists.txt").read_text()).group(1)


def run(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=60)


def test_version_is_the_projects():
    assert run(QK, "--version").stdout.strip() == f"qk {VERSION}"
    assert run(h.QK_TRACE, "--version").stdout.strip() == f"qk-trace {VERSION}"


def test_usage_lines_name_the_program():
    assert "Usage: qk [OPTIONS] SUBCOMMAND" in run(QK, "--help").stdout
    assert "Usage: qk-trace [OPTIONS] [command...]" in run(h.QK_TRACE, "--help").stdout


def test_no_command_prints_the_usage():
    for program, hint in ((QK, "Usage: qk "), (h.QK_TRACE, "qk-trace: no command given; write it after --")):
        r = run(program)
        assert r.returncode == 2
        assert "Usage: " in r.stderr and hint in r.stderr, r.stderr


CATCH_XML = """<?xml version="1.0" encoding="UTF-8"?>
<Catch name="qk_unit_tests"><Group name="qk_unit_tests">
<TestCase name="a"><OverallResult success="true"/></TestCase>
<OverallResults successes="40" failures="1" expectedFailures="0"/>
<OverallResultsCases successes="11" failures="1" expectedFailures="0"/>
</Group>
<OverallResults successes="40" failures="1" expectedFailures="0"/>
<OverallResultsCases successes="11" failures="1" expectedFailures="0"/>
</Catch>
"""

JUNIT_XML = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="t" name="a"/><testcase classname="t" name="b"><skipped message="no eBPF"/></testcase>
<testcase classname="t" name="c"><failure message="boom"/></testcase><testcase classname="t" name="d"/>
</testsuite></testsuites>
"""


# A unit case that skipped (qk::test::skip: a warning "skipped: ..."), one that warned of something else, and
# one that failed after it skipped, which is a failure.
CATCH_SKIP_XML = """<?xml version="1.0" encoding="UTF-8"?>
<Catch name="qk_unit_tests"><Group name="qk_unit_tests">
<TestCase name="s"><Warning>skipped: no engine can record here</Warning><OverallResult success="true"/></TestCase>
<TestCase name="w"><Warning>parse 12 ms</Warning><OverallResult success="true"/></TestCase>
<TestCase name="f"><Warning>skipped: not root</Warning><Failure>boom</Failure>
<OverallResult success="false"/></TestCase>
<OverallResults successes="5" failures="1" expectedFailures="0"/>
<OverallResultsCases successes="2" failures="1" expectedFailures="0"/>
</Group>
<OverallResults successes="5" failures="1" expectedFailures="0"/>
<OverallResultsCases successes="2" failures="1" expectedFailures="0"/>
</Catch>
"""


def test_test_summary_counts_cases_run_passed_failed_and_skipped(tmp_path):
    results = tmp_path / "test-results"
    results.mkdir()
    r = run(h.SOURCE_DIR / "scripts/test-summary", tmp_path)
    assert "unit cases:        did not run (no results)" in r.stdout
    (results / "unit").mkdir()
    (results / "e2e").mkdir()
    (results / "unit" / "a.xml").write_text(CATCH_XML)
    (results / "e2e" / "test_a.xml").write_text(JUNIT_XML)
    r = run(h.SOURCE_DIR / "scripts/test-summary", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "unit cases:        12 ran, 11 passed, 1 failed, 0 skipped" in r.stdout
    assert "end-to-end tests:  4 ran, 2 passed, 1 failed, 1 skipped" in r.stdout


def test_test_summary_sums_each_ctests_results_and_says_which_it_cannot_read(tmp_path):
    # One results file per ctest (a unit case, an e2e file): the summary is their sum.
    unit, e2e = tmp_path / "test-results" / "unit", tmp_path / "test-results" / "e2e"
    unit.mkdir(parents=True)
    e2e.mkdir()
    (unit / "a.xml").write_text(CATCH_XML)
    (unit / "b.xml").write_text(CATCH_SKIP_XML)
    (e2e / "test_a.xml").write_text(JUNIT_XML)
    (e2e / "test_b.xml").write_text(JUNIT_XML)
    r = run(h.SOURCE_DIR / "scripts/test-summary", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "unit cases:        15 ran, 12 passed, 2 failed, 1 skipped\n" in r.stdout
    assert "end-to-end tests:  8 ran, 4 passed, 2 failed, 2 skipped\n" in r.stdout
    # An e2e ctest is a whole file: the summary names each failed case and test.
    assert r.stdout.endswith("failed:\n  unit: f\n  e2e: test_a.py::c\n  e2e: test_b.py::c\n"), r.stdout
    # A case that crashed leaves its results cut short; a file that is not XML at all.
    (unit / "c.xml").write_text(CATCH_XML.split("<OverallResults ")[0])
    (e2e / "test_c.xml").write_text("<testsuites")
    r = run(h.SOURCE_DIR / "scripts/test-summary", tmp_path)
    assert r.returncode == 0, r.stderr
    bad = "1 results unreadable or incomplete"
    assert f"unit cases:        15 ran, 12 passed, 2 failed, 1 skipped; {bad} ({unit / 'c.xml'}: " in r.stdout
    assert f"end-to-end tests:  8 ran, 4 passed, 2 failed, 2 skipped; {bad} ({e2e / 'test_c.xml'}: " in r.stdout
