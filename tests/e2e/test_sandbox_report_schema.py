"""schemas/sandbox-report.schema.json itself: a valid 2020-12 schema that accepts the documented shape
and rejects what breaks it. (The unit tests check that qk writes this shape, kind by kind.)"""

from __future__ import annotations

import copy

import jsonschema
import pytest

import sandbox_report as sr

RUN = {"id": "8812-1", "idFrom": "GITHUB_RUN_ID", "commit": "3f2a9c", "shards": ["0"]}
SEEN = {"shard": "0", "host": "runner-1", "kernel": "6.8.0-1021-azure", "recorder": "strace", "landlockAbi": 4,
        "overlay": None, "lostEvents": 0}
NOT_SEEN = {**SEEN, "recorder": None}

# One of each status and of each kind of finding, as in the unit tests' run with every kind.
VALID = {
    "schemaVersion": 1,
    "run": RUN,
    "mode": "audit",
    "recorder": "strace",
    "summary": {
        "tasks": 8,
        "audited": 4,
        "wentBeyond": 3,
        "restored": 1,
        "notAudited": 1,
        "unsandboxed": 1,
        "refused": 1,
    },
    "tasks": {
        "app:build": {
            "status": "audited",
            "findings": {
                "readsOutsideInputs": ["other/notes.txt", "tools/x.js"],
                "tsconfigReads": ["tsconfig.base.json"],
                "strayWrites": [".git/index", "stray.txt"],
                "unkeyedReads": [".env", ".git/HEAD"],
                "manifestReads": ["lib/package.json"],
                "toolchainReads": [".nvmrc"],
                "dependencyReads": {"lib": ["lib/src/a.ts", "lib/src/b.ts"], "util": ["util/index.js"]},
                "unkeyedPackages": ["fallow"],
                "hoistedPackages": ["phantom"],
            },
        },
        "app:clean": {"status": "audited", "findings": {}},
        "app:e2e": {"status": "unsandboxed", "reason": "its inputs cannot be resolved"},
        "app:lint": {
            "status": "audited",
            "findings": {"tsconfigReads": ["tools/x.js"], "strayWrites": [".git/FETCH_HEAD"]},
        },
        "app:test": {"status": "notAudited", "reason": "the recording lost 12 events"},
        "docs:build": {"status": "restored"},
        "lib:build": {"status": "audited", "findings": {"readsOutsideInputs": ["tools/x.js"]}},
        "lib:lint": {"status": "refused", "reason": "Landlock cannot take its rules"},
    },
    "readByMany": [{"path": "tools/x.js", "tasks": 3}],
    "packagesReadByMany": [{"package": "fallow", "tasks": 3}],
}

NO_RECORDER = {
    "schemaVersion": 1,
    "run": {**RUN, "idFrom": "local", "id": "local-runner-1-1764820000000-4242", "commit": None, "shards": [None]},
    "mode": "enforce",
    "recorder": None,
    "recorderUnavailable": "strace is not installed",
    "summary": {
        "tasks": 1,
        "audited": 0,
        "wentBeyond": 0,
        "restored": 0,
        "notAudited": 1,
        "unsandboxed": 0,
        "refused": 0,
    },
    "tasks": {"app:build": {"status": "notAudited", "reason": "no recorder",
                            "provenance": {**NOT_SEEN, "shard": None, "landlockAbi": None}}},
    "readByMany": [],
    "packagesReadByMany": [],
}


for _id, _task in VALID["tasks"].items():
    _task["provenance"] = SEEN if _task["status"] in ("audited", "notAudited") else NOT_SEEN
    if _task["status"] != "refused":
        _task["hash"] = "0123456789abcdef0123456789abcdef"

# Two shards merged: each task's provenance names its shard and engine, one task met with two hashes.
MERGED = copy.deepcopy(VALID)
MERGED["run"]["shards"] = [None, "0", "1"]
MERGED["recorder"] = "mixed"
MERGED["recorderFallback"] = "the eBPF recorder cannot load: no CAP_BPF"
MERGED["tasks"]["lib:build"]["provenance"] = {**SEEN, "shard": "1", "recorder": "ebpf", "lostEvents": 0}
MERGED["summary"]["conflicts"] = 1
MERGED["conflicts"] = {"web:build": [
    {"status": "restored", "hash": "0" * 32, "provenance": {**NOT_SEEN, "shard": None}},
    {"status": "audited", "hash": "1" * 32, "provenance": {**SEEN, "shard": "1"}, "findings": {}},
]}


def test_schema_is_valid_2020_12():
    schema = sr.schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_documented_shapes_are_valid():
    assert sr.schema_errors(VALID) == []
    assert sr.order_errors(VALID) == []
    assert sr.schema_errors(NO_RECORDER) == []
    assert sr.schema_errors(MERGED) == []
    ebpf_nothing_run = copy.deepcopy(NO_RECORDER)
    ebpf_nothing_run.update(recorder="ebpf", tasks={}, summary={k: 0 for k in NO_RECORDER["summary"]})
    del ebpf_nothing_run["recorderUnavailable"]
    assert sr.schema_errors(ebpf_nothing_run) == []


def _broken(change):
    doc = copy.deepcopy(VALID)
    change(doc)
    return doc


def _findings(doc, task="app:build"):
    return doc["tasks"][task]["findings"]


BROKEN = {
    "missing summary field": lambda d: d["summary"].pop("wentBeyond"),
    "unknown summary field": lambda d: d["summary"].update(cached=1),
    "negative count": lambda d: d["summary"].update(refused=-1),
    "fractional count": lambda d: d["summary"].update(tasks=8.5),
    "bad status": lambda d: d["tasks"]["app:e2e"].update(status="skipped"),
    "task without status": lambda d: d["tasks"]["app:e2e"].pop("status"),
    "unknown task field": lambda d: d["tasks"]["app:e2e"].update(exitCode=1),
    "task id without target": lambda d: d["tasks"].update({"app": {"status": "restored"}}),
    "empty reason": lambda d: d["tasks"]["app:e2e"].update(reason=""),
    "audited task without findings": lambda d: d["tasks"]["app:clean"].pop("findings"),
    "restored task with findings": lambda d: d["tasks"]["docs:build"].update(findings={}),
    "unknown finding kind": lambda d: _findings(d).update(hoistedReads=["x"]),
    "non-string path": lambda d: _findings(d)["readsOutsideInputs"].append(7),
    "absolute path": lambda d: _findings(d)["strayWrites"].append("/tmp/x"),
    "empty path": lambda d: _findings(d)["unkeyedReads"].append(""),
    "duplicate path": lambda d: _findings(d)["manifestReads"].append("lib/package.json"),
    "empty kind": lambda d: _findings(d).update(toolchainReads=[]),
    "dependency reads as a list": lambda d: _findings(d).update(dependencyReads=["lib/src/a.ts"]),
    "dependency project without paths": lambda d: _findings(d)["dependencyReads"].update(other=[]),
    "empty dependency reads": lambda d: _findings(d).update(dependencyReads={}),
    "schemaVersion 2": lambda d: d.update(schemaVersion=2),
    "schemaVersion as a string": lambda d: d.update(schemaVersion="1"),
    "unknown mode": lambda d: d.update(mode="strict"),
    "unknown recorder": lambda d: d.update(recorder="ptrace"),
    "missing recorder": lambda d: d.pop("recorder"),
    "empty recorderUnavailable": lambda d: d.update(recorderUnavailable=""),
    "unknown top-level field": lambda d: d.update(extra=1),
    "missing readByMany": lambda d: d.pop("readByMany"),
    "readByMany entry without tasks": lambda d: d["readByMany"][0].pop("tasks"),
    "readByMany entry without path": lambda d: d["readByMany"][0].pop("path"),
    "readByMany entry with unknown field": lambda d: d["readByMany"][0].update(kind="read"),
    "readByMany of 2 tasks": lambda d: d["readByMany"][0].update(tasks=2),
    "missing packagesReadByMany": lambda d: d.pop("packagesReadByMany"),
    "packagesReadByMany entry without package": lambda d: d["packagesReadByMany"][0].pop("package"),
    "empty hoistedPackages": lambda d: d["tasks"]["app:build"]["findings"].update(hoistedPackages=[]),
    "missing run": lambda d: d.pop("run"),
    "run without id": lambda d: d["run"].pop("id"),
    "run id from an unknown variable": lambda d: d["run"].update(idFrom="JENKINS_BUILD"),
    "run without shards": lambda d: d["run"].update(shards=[]),
    "task without provenance": lambda d: d["tasks"]["app:build"].pop("provenance"),
    "provenance without host": lambda d: d["tasks"]["app:build"]["provenance"].pop("host"),
    "unknown provenance recorder": lambda d: d["tasks"]["app:build"].update(provenance={**SEEN, "recorder": "mixed"}),
    "negative lost events": lambda d: d["tasks"]["app:build"].update(provenance={**SEEN, "lostEvents": -1}),
    "short hash": lambda d: d["tasks"]["app:build"].update(hash="0123"),
    "conflict of one record": lambda d: d.update(conflicts={"a:b": [VALID["tasks"]["docs:build"]]}),
}


@pytest.mark.parametrize("what", BROKEN)
def test_schema_rejects(what):
    assert sr.schema_errors(_broken(BROKEN[what])), f"the schema accepts a document with {what}"


def test_order_checks():
    doc = copy.deepcopy(VALID)
    _findings(doc)["readsOutsideInputs"].reverse()
    assert sr.order_errors(doc) == ["tasks/app:build/findings/readsOutsideInputs: not sorted"]
    doc = copy.deepcopy(VALID)
    _findings(doc)["dependencyReads"]["lib"].reverse()
    assert sr.order_errors(doc) == ["tasks/app:build/findings/dependencyReads/lib: not sorted"]
    doc = copy.deepcopy(VALID)
    doc["tasks"] = dict(reversed(list(doc["tasks"].items())))
    assert sr.order_errors(doc) == ["tasks: not in sorted order"]
    doc = copy.deepcopy(VALID)
    doc["readByMany"].insert(0, {"path": "z.js", "tasks": 3})
    assert sr.order_errors(doc) == ["readByMany: not sorted by path"]
