"""Fixtures of the end-to-end tests.

Privileged tests (marked `@pytest.mark.privileged`, or taking the `recorder` parameter) need root, a
writable cgroup2 mount, and for eBPF kernel BTF and CAP_BPF/CAP_SYS_ADMIN, for strace the strace
binary. Where something is missing they skip, with the reason; but with QK_REQUIRE_PRIVILEGED=1 (as CI
sets) such a skip is a failure, and so is any other skip of the e2e suite: on CI nothing may quietly
not run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import qk_harness as h


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "privileged(recorder=None): needs root and a cgroup2 mount (and, for recorder='ebpf'/'strace', "
        "what that recorder needs); skips where missing, fails instead under QK_REQUIRE_PRIVILEGED=1",
    )


def pytest_report_header(config):
    parts = []
    for recorder in h.RECORDERS:
        problems = h.privilege_problems(recorder)
        parts.append(f"{recorder}: " + ("available" if not problems else "unavailable (" + "; ".join(problems) + ")"))
    return [
        f"qk e2e: build {h.BUILD_DIR}, source {h.SOURCE_DIR}",
        "qk e2e: " + ", ".join(parts),
        f"qk e2e: QK_REQUIRE_PRIVILEGED={'1 (skips fail)' if h.require_privileged_env() else '0 (skips allowed)'}",
    ]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Whatever made a test skip (a skip marker, pytest.skip, importorskip), under QK_REQUIRE_PRIVILEGED=1
    # it fails: CI must not pass by running nothing.
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and h.require_privileged_env():
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if h.NOT_APPLICABLE in reason:  # h.not_applicable: the kernel cannot do it at all, for anyone
            return
        report.outcome = "failed"
        report.longrepr = f"skipped, which QK_REQUIRE_PRIVILEGED=1 turns into a failure: {reason}"


@pytest.fixture(autouse=True)
def _privileges(request):
    """Checks privileges for tests marked `privileged` or parametrised by `recorder`."""
    marker = request.node.get_closest_marker("privileged")
    callspec = getattr(request.node, "callspec", None)
    recorder = callspec.params.get("recorder") if callspec else None
    if marker is None and recorder is None:
        return
    if marker is not None and recorder is None:
        recorder = marker.kwargs.get("recorder", marker.args[0] if marker.args else None)
    h.require_privileges(recorder if recorder in h.RECORDERS else None)


@pytest.fixture(scope="session")
def qk_trace() -> Path:
    if not os.access(h.QK_TRACE, os.X_OK):
        pytest.fail(
            f"{h.QK_TRACE} is not built: run `cmake --preset default && cmake --build build/default` "
            "(or set QK_BUILD_DIR)",
            pytrace=False,
        )
    return h.QK_TRACE


@pytest.fixture(scope="session")
def scenario_path():
    """scenario_path("open") -> the built scenario program tests/scenarios/open.c."""

    def find(name: str) -> Path:
        path = h.SCENARIO_DIR / name
        if not os.access(path, os.X_OK):
            pytest.fail(f"scenario program {path} is not built (tests/scenarios/{name}.c)", pytrace=False)
        return path

    return find


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A fresh, empty directory with a canonical path (symlinks in the temp root resolved)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    return Path(os.path.realpath(ws))


@pytest.fixture
def json_path(tmp_path) -> Path:
    """Where qk-trace writes its JSON: outside the workspace, so it never shows in the recording."""
    return Path(os.path.realpath(tmp_path)) / "trace.json"


@pytest.fixture(scope="session")
def recorded(tmp_path_factory, qk_trace, scenario_path):
    """recorded(name, recorder) -> h.Recorded: the scenario run once under qk-trace with that recorder
    (cached for the session, so the per-engine tests and the engines-agree test share one run each)."""
    import scenarios as sc

    cache: dict = {}

    def record(name: str, recorder: str) -> h.Recorded:
        key = (name, recorder)
        if key not in cache:
            scenario = sc.BY_NAME[name]
            base = Path(os.path.realpath(tmp_path_factory.mktemp(f"{name}-{recorder}-")))
            root = base / "ws"
            root.mkdir()
            sc.lay_out(root, scenario.setup)
            program = scenario_path(name)
            run = h.run_trace(
                [program, root, *scenario.args], recorder=recorder, cwd=root, json_path=base / "trace.json"
            )
            cache[key] = h.Recorded(scenario, recorder, str(root), str(program), run)
        return cache[key]

    return record
