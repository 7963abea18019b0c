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


def test_test_summary_counts_cases_run_passed_failed_and_skipped(tmp_path):
    results = tmp_path / "test-results"
    results.mkdir()
    r = run(h.SOURCE_DIR / "scripts/test-summary", tmp_path)
    assert "unit cases:        did not run (no results)" in r.stdout
    (results / "unit.xml").write_text(CATCH_XML)
    (results / "e2e.xml").write_text(JUNIT_XML)
    r = run(h.SOURCE_DIR / "scripts/test-summary", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "unit cases:        12 ran, 11 passed, 1 failed, 0 skipped" in r.stdout
    assert "end-to-end tests:  4 ran, 2 passed, 1 failed, 1 skipped" in r.stdout
