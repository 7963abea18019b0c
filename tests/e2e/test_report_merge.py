"""qk report merge: the --sandbox-reports of one run's shards, each from its own checkout and recorder, as
one report of the same schema; conflicts, refusals and bad input."""

from __future__ import annotations

import itertools
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import sandbox_report
from audit_workspace import QK, make_workspace, qk

PROJECTS = ("a", "b", "c", "d")


def shard_workspace(root: Path) -> Path:
    """Four projects whose build reads tools/config.txt, which no input declares: 2 per shard, so only
    the merge sees 4 tasks read it (readByMany needs 3)."""
    projects = {p: {"root": f"libs/{p}", "targets": {"build": {
        "command": f"mkdir -p libs/{p}/dist && cat tools/config.txt libs/{p}/src.txt > libs/{p}/dist/out.txt",
        "outputs": ["{projectRoot}/dist"], "cache": True}}} for p in PROJECTS}
    files = {".gitignore": "dist\n", "tools/config.txt": "shared\n", **{f"libs/{p}/src.txt": f"{p}\n" for p in PROJECTS}}
    return make_workspace(root, projects, files)


def run_shard(ws: Path, report: Path, projects: str, shard: str, recorder: str, run_id: str = "run-7",
              mode: str = "--sandbox") -> dict:
    r = qk(ws, "run-many", "-t", "build", "-p", projects, mode, "--sandbox-report", str(report), recorder=recorder,
           env={"QK_RUN_ID": run_id, "QK_SHARD": shard, "GITHUB_SHA": "c0ffee"})
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(report.read_text())


def merge(*reports: Path, out: Path | None = None) -> subprocess.CompletedProcess:
    args = [str(QK), "report", "merge", *map(str, reports)] + (["-o", str(out)] if out else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


@pytest.fixture
def shards(tmp_path):
    """Shard 0 (eBPF) ran a and b in one checkout; shard 1 (strace) c and d in another; shard 2 restored
    a in the first checkout, and shard 3 ran a in a third checkout where its source differs."""
    first = shard_workspace(tmp_path / "checkout-1")
    second = shard_workspace(tmp_path / "elsewhere" / "checkout-2")
    third = shard_workspace(tmp_path / "checkout-3")
    (third / "libs/a/src.txt").write_text("a, changed\n")
    out = {}
    out["0"] = tmp_path / "shard-0.json"
    run_shard(first, out["0"], "a,b", "0", "ebpf")
    out["1"] = tmp_path / "shard-1.json"
    run_shard(second, out["1"], "c,d", "1", "strace")
    out["2"] = tmp_path / "shard-2.json"
    doc = run_shard(first, out["2"], "a", "2", "ebpf")
    assert doc["tasks"]["a:build"]["status"] == "restored"
    out["3"] = tmp_path / "shard-3.json"
    run_shard(third, out["3"], "a", "3", "ebpf")
    return out


@pytest.mark.privileged("ebpf")
def test_shards_merge_into_one_report_of_the_same_schema(shards, tmp_path):
    each = {k: json.loads(p.read_text()) for k, p in shards.items()}
    assert each["0"]["readByMany"] == [] and each["1"]["readByMany"] == []
    r = merge(shards["0"], shards["1"], shards["2"], out=tmp_path / "run.json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    doc = json.loads((tmp_path / "run.json").read_text())
    assert sandbox_report.schema_errors(doc) == [] and sandbox_report.order_errors(doc) == []
    assert doc["run"] == {"id": "run-7", "idFrom": "QK_RUN_ID", "commit": "c0ffee", "shards": ["0", "1", "2"]}
    assert doc["recorder"] == "mixed"
    assert sorted(doc["tasks"]) == ["a:build", "b:build", "c:build", "d:build"]
    # a:build ran on shard 0 and was restored on shard 2 with the same hash: the record that ran is kept.
    a = doc["tasks"]["a:build"]
    assert a["status"] == "audited" and a["provenance"]["shard"] == "0" and a["provenance"]["recorder"] == "ebpf"
    assert a["hash"] == each["2"]["tasks"]["a:build"]["hash"]
    assert doc["tasks"]["c:build"]["provenance"]["recorder"] == "strace"
    assert doc["tasks"]["c:build"] == each["1"]["tasks"]["c:build"]  # paths relative: other roots merge
    # Recomputed over all tasks: four read tools/config.txt, which neither shard alone counts as many.
    assert doc["readByMany"] == [{"path": "tools/config.txt", "tasks": 4}]
    assert doc["summary"] == {"tasks": 4, "audited": 4, "wentBeyond": 4, "restored": 0, "notAudited": 0,
                              "unsandboxed": 0, "refused": 0}
    assert "conflicts" not in doc
    # To stdout without -o, the same bytes.
    assert merge(shards["0"], shards["1"], shards["2"]).stdout == (tmp_path / "run.json").read_text()


@pytest.mark.privileged("ebpf")
def test_merging_is_associative_and_independent_of_order(shards, tmp_path):
    files = [shards[k] for k in "0123"]
    r = merge(*files)
    assert r.returncode == 0, r.stderr
    expected = r.stdout
    rng = random.Random(17)
    for _ in range(4):
        order = files[:]
        rng.shuffle(order)
        assert merge(*order).stdout == expected, f"merging in the order {order} differs"
    for left, right in itertools.combinations(range(1, 4), 2):
        groups = [files[:left], files[left:right], files[right:]]
        partial = []
        for n, group in enumerate(groups):
            out = tmp_path / f"group-{left}-{right}-{n}.json"
            assert merge(*group, out=out).returncode == 0
            partial.append(out)
        assert merge(*reversed(partial)).stdout == expected, f"grouping {groups} changes the merge"


@pytest.mark.privileged("ebpf")
def test_a_task_with_different_hashes_on_two_shards_is_a_conflict(shards, tmp_path):
    r = merge(shards["0"], shards["3"], out=tmp_path / "run.json")
    assert r.returncode == 0, r.stderr
    assert "a:build has different key hashes on different shards" in r.stderr, r.stderr
    doc = json.loads((tmp_path / "run.json").read_text())
    assert sandbox_report.schema_errors(doc) == []
    assert "a:build" not in doc["tasks"] and sorted(doc["tasks"]) == ["b:build"]
    records = doc["conflicts"]["a:build"]
    assert [r["provenance"]["shard"] for r in sorted(records, key=lambda r: r["provenance"]["shard"])] == ["0", "3"]
    assert [r["hash"] for r in records] == sorted(r["hash"] for r in records) and len({r["hash"] for r in records}) == 2
    assert doc["summary"]["conflicts"] == 1 and doc["summary"]["tasks"] == 1


@pytest.mark.privileged("ebpf")
def test_reports_of_another_run_commit_or_mode_are_refused(tmp_path):
    ws = shard_workspace(tmp_path / "ws")
    one = run_shard(ws, tmp_path / "one.json", "a", "0", "ebpf", run_id="run-1")
    other = tmp_path / "other.json"
    run_shard(ws, other, "b", "1", "ebpf", run_id="run-2")
    r = merge(tmp_path / "one.json", other)
    assert r.returncode != 0 and r.stdout == ""
    assert f"{tmp_path / 'one.json'} is of run run-1 and {other} of run run-2: only the shards of one run merge" \
        in r.stderr, r.stderr
    commit = dict(one, run={**one["run"], "commit": "beef", "shards": ["9"]})
    (tmp_path / "commit.json").write_text(json.dumps(commit))
    r = merge(tmp_path / "one.json", tmp_path / "commit.json")
    assert r.returncode != 0 and "ran commit c0ffee" in r.stderr and "commit beef" in r.stderr, r.stderr
    enforce = dict(one, mode="enforce")
    (tmp_path / "enforce.json").write_text(json.dumps(enforce))
    r = merge(tmp_path / "one.json", tmp_path / "enforce.json")
    assert r.returncode != 0 and "under --sandbox=audit" in r.stderr and "--sandbox=enforce" in r.stderr, r.stderr


@pytest.mark.privileged("ebpf")
def test_bad_reports_say_what_and_where(tmp_path):
    ws = shard_workspace(tmp_path / "ws")
    good = run_shard(ws, tmp_path / "good.json", "a", "0", "ebpf")
    cases = {
        "truncated.json": ((tmp_path / "good.json").read_text()[:200], "truncated.json:"),
        "status.json": (json.dumps({**good, "tasks": {"a:build": {**good["tasks"]["a:build"], "status": "ok"}}}),
                        "status.json: tasks/a:build/status: expected one of audited"),
        "provenance.json": (json.dumps({**good, "tasks": {"a:build": {"status": "restored"}}}),
                            "provenance.json: tasks/a:build/provenance: missing"),
        "version.json": (json.dumps({**good, "schemaVersion": 2}), "version.json: schemaVersion: this qk reads"),
        "kind.json": (json.dumps({**good, "tasks": {"a:build": {**good["tasks"]["a:build"],
                                                                 "findings": {"oddReads": ["x"]}}}}),
                      "kind.json: tasks/a:build/findings/oddReads: not a kind of finding"),
        "old.json": (json.dumps({k: v for k, v in good.items() if k != "run"}), "old.json: run: missing"),
        "id.json": (json.dumps({**good, "tasks": {"build": good["tasks"]["a:build"]}}),
                    "id.json: tasks/build: a task's id is project:target"),
    }
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text)
        r = merge(tmp_path / "good.json", tmp_path / name, out=tmp_path / "out.json")
        assert r.returncode != 0 and message in r.stderr, f"{name}: {r.stderr}"
        assert not (tmp_path / "out.json").exists(), "a failed merge wrote its output"
    # The configuration reader's position for JSON that does not parse.
    r = merge(tmp_path / "truncated.json")
    assert re.search(r"truncated\.json:\d+:\d+: malformed JSON", r.stderr), r.stderr
    r = merge(tmp_path / "missing.json")
    assert r.returncode != 0 and "missing.json" in r.stderr, r.stderr


def run_report_shard(ws: Path, report: Path, projects: str, shard: str, run_id: str = "run-7") -> dict:
    r = qk(ws, "run-many", "-t", "build", "-p", projects, "--report", str(report),
           env={"QK_RUN_ID": run_id, "QK_SHARD": shard, "GITHUB_SHA": "c0ffee"})
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(report.read_text())


@pytest.mark.privileged("strace")
def test_run_reports_merge_too(tmp_path):
    """--report files merge as sandbox reports do: one record per task (the one that ran before one
    restored), conflicts apart, the summary counted again; a --report and a --sandbox-report do not mix,
    and the page shows only sandbox reports."""
    import jsonschema
    schema = json.loads((Path(__file__).resolve().parents[2] / "schemas/run-report.schema.json").read_text())
    first = shard_workspace(tmp_path / "one")
    second = shard_workspace(tmp_path / "two")
    third = shard_workspace(tmp_path / "three")
    (third / "libs/a/src.txt").write_text("a, changed\n")
    run_report_shard(first, tmp_path / "r0.json", "a,b", "0")
    run_report_shard(second, tmp_path / "r1.json", "c,d", "1")
    again = run_report_shard(first, tmp_path / "r2.json", "a", "2")
    assert again["tasks"]["a:build"]["source"] in ("restored", "restoredInPlace")
    r = merge(tmp_path / "r2.json", tmp_path / "r1.json", tmp_path / "r0.json", out=tmp_path / "run.json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    doc = json.loads((tmp_path / "run.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["run"]["shards"] == ["0", "1", "2"]
    assert list(doc["tasks"]) == ["a:build", "b:build", "c:build", "d:build"]
    assert doc["tasks"]["a:build"]["source"] == "ran" and doc["tasks"]["a:build"]["provenance"]["shard"] == "0"
    assert doc["summary"] == {"tasks": 4, "succeeded": 4, "failed": 0, "restored": 0, "ran": 4}
    assert merge(tmp_path / "r0.json", tmp_path / "r1.json", tmp_path / "r2.json").stdout == \
        (tmp_path / "run.json").read_text()

    run_report_shard(third, tmp_path / "r3.json", "a", "3")
    r = merge(tmp_path / "r0.json", tmp_path / "r3.json", out=tmp_path / "conflict.json")
    assert r.returncode == 0 and "a:build has different key hashes on different shards" in r.stderr, r.stderr
    doc = json.loads((tmp_path / "conflict.json").read_text())
    jsonschema.validate(doc, schema)
    assert list(doc["tasks"]) == ["b:build"] and len(doc["conflicts"]["a:build"]) == 2
    assert doc["summary"]["conflicts"] == 1

    sandbox = tmp_path / "s.json"
    run_shard(first, sandbox, "a", "4", "strace")
    r = merge(tmp_path / "r0.json", sandbox)
    assert r.returncode != 0 and "is a --report and" in r.stderr and "a --sandbox-report" in r.stderr, r.stderr
    r = subprocess.run([str(QK), "report", "html", str(tmp_path / "r0.json"), "-o", str(tmp_path / "p.html")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "qk report html shows --sandbox-report files" in r.stderr, r.stderr
