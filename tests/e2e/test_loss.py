"""Loss: with a deliberately tiny eBPF ring buffer and a burst of opens, events are dropped; the
recording must then be incomplete, with a reason that counts the lost events, never complete. The
same burst at the default size is recorded with no loss."""

from __future__ import annotations

import re

import pytest

import qk_harness as h

BURST = 200_000

pytestmark = pytest.mark.privileged(recorder="ebpf")


def _burst(scenario_path, workspace, json_path, env=None):
    (workspace / "burst.txt").write_text("burst\n")
    return h.run_trace(
        [scenario_path("burst"), workspace, str(BURST)],
        recorder="ebpf",
        cwd=workspace,
        json_path=json_path,
        env=env,
    )


@pytest.mark.parametrize("size", ["4096", "8192"])
def test_tiny_ring_buffer_loses_events_and_says_so(size, qk_trace, scenario_path, workspace, json_path):
    run = _burst(scenario_path, workspace, json_path, env={"QK_RING_BUFFER_BYTES": size})
    assert run.returncode == 0, run.describe()
    doc = run.doc
    assert doc["complete"] is False, (
        f"{BURST} opens through a {size}-byte ring buffer cannot all fit, yet the recording says complete"
    )
    lost = [r for r in doc["incompleteReasons"] if re.search(r"lost|drop", r, re.I)]
    assert lost, f"no reason mentions lost events: {doc['incompleteReasons']}"
    counts = [int(n) for r in lost for n in re.findall(r"\d+", r)]
    assert any(n > 0 for n in counts), f"the reason does not count the lost events: {lost}"


def test_default_ring_buffer_records_the_burst_whole(qk_trace, scenario_path, workspace, json_path):
    run = _burst(scenario_path, workspace, json_path)
    assert run.returncode == 0, run.describe()
    doc = run.doc
    assert doc["complete"] is True, doc["incompleteReasons"]
    assert h.files_under(doc, str(workspace))["read"] == {"burst.txt"}


@pytest.mark.parametrize("size", ["1000", "4097", "abc"])
def test_invalid_ring_buffer_size_is_an_error(size, qk_trace, workspace, json_path):
    """QK_RING_BUFFER_BYTES must be a power of two of at least 4096; anything else is said, not
    silently replaced."""
    run = h.run_trace(["/bin/true"], recorder="ebpf", cwd=workspace, json_path=json_path,
                      env={"QK_RING_BUFFER_BYTES": size})
    assert run.returncode != 0, run.describe()
    assert "QK_RING_BUFFER_BYTES" in run.stderr, run.describe()
