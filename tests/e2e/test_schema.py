"""schemas/trace.schema.json itself: a valid 2020-12 schema that accepts the documented shape and
rejects what breaks it. (Every document the other tests make is validated against it as well.)"""

from __future__ import annotations

import copy

import jsonschema
import pytest

import qk_harness as h

VALID = {
    "schemaVersion": 1,
    "command": ["make", "-j2"],
    "cwd": "/src",
    "recorder": "ebpf",
    "exitCode": 0,
    "complete": True,
    "incompleteReasons": [],
    "leftoverProcessesKilled": 0,
    "processes": [
        {"pid": 10, "ppid": 1, "argv": ["make", "-j2"], "exitCode": 0},
        {"pid": 11, "ppid": 10, "argv": [], "signal": "SIGTERM"},
    ],
    "files": {
        "read": ["/src/Makefile", "/usr/bin/make"],
        "written": ["/src/a.o"],
        "created": ["/src/a.o"],
        "removed": [],
        "renamed": [{"from": "/src/a.tmp", "to": "/src/a"}],
        "listed": ["/src"],
        "probed": ["/src/GNUmakefile"],
    },
}


def test_schema_is_valid_2020_12():
    schema = h.schema_validator().schema
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_documented_shape_is_valid():
    assert h.schema_errors(VALID) == []
    assert h.contract_errors(VALID) == []
    killed = copy.deepcopy(VALID)
    del killed["exitCode"]
    killed["signal"] = "SIGKILL"
    killed["complete"] = False
    killed["incompleteReasons"] = ["1234 events were lost"]
    killed["recorder"] = "strace"
    assert h.schema_errors(killed) == []


def test_denied_is_optional():
    """`denied` came after the first documents: those without it stay valid; qk-trace writes it always
    (test_scenarios.py, test_denied.py)."""
    doc = copy.deepcopy(VALID)
    doc["files"]["denied"] = ["/src/secret", "/usr/bin/tool"]
    assert h.schema_errors(doc) == []
    assert h.contract_errors(doc) == []
    doc["files"]["denied"].reverse()
    assert h.contract_errors(doc), "an unsorted denied list must break the contract"
    assert "denied" not in VALID["files"] and h.schema_errors(VALID) == []


def _broken(change):
    doc = copy.deepcopy(VALID)
    change(doc)
    return doc


BROKEN = {
    "both exitCode and signal": lambda d: d.update(signal="SIGKILL"),
    "neither exitCode nor signal": lambda d: d.pop("exitCode"),
    "unknown top-level field": lambda d: d.update(extra=1),
    "missing files list": lambda d: d["files"].pop("probed"),
    "unknown files list": lambda d: d["files"].update(opened=[]),
    "relative path": lambda d: d["files"]["read"].append("relative/path"),
    "duplicate path": lambda d: d["files"]["read"].append("/src/Makefile"),
    "rename without to": lambda d: d["files"]["renamed"].append({"from": "/x"}),
    "rename with extra field": lambda d: d["files"]["renamed"][0].update(how="exchange"),
    "complete with reasons": lambda d: d.update(incompleteReasons=["lost"]),
    "incomplete without reasons": lambda d: d.update(complete=False),
    "unknown recorder": lambda d: d.update(recorder="ptrace"),
    "schemaVersion 2": lambda d: d.update(schemaVersion=2),
    "empty command": lambda d: d.update(command=[]),
    "relative cwd": lambda d: d.update(cwd="src"),
    "signal number instead of name": lambda d: (d.pop("exitCode"), d.update(signal=9)),
    "exit code out of range": lambda d: d.update(exitCode=256),
    "negative leftovers": lambda d: d.update(leftoverProcessesKilled=-1),
    "process with both exitCode and signal": lambda d: d["processes"][0].update(signal="SIGKILL"),
    "process with unknown field": lambda d: d["processes"][0].update(cwd="/"),
    "process without argv": lambda d: d["processes"][0].pop("argv"),
    "relative denied path": lambda d: d["files"].update(denied=["secret"]),
    "duplicate denied path": lambda d: d["files"].update(denied=["/src/secret", "/src/secret"]),
    "denied not a list": lambda d: d["files"].update(denied="/src/secret"),
}


@pytest.mark.parametrize("what", BROKEN)
def test_schema_rejects(what):
    assert h.schema_errors(_broken(BROKEN[what])), f"the schema accepts a document with {what}"


def test_contract_checks_order():
    doc = copy.deepcopy(VALID)
    doc["files"]["read"] = ["/usr/bin/make", "/src/Makefile"]
    assert h.contract_errors(doc)
    doc = copy.deepcopy(VALID)
    doc["files"]["listed"] = ["/src/../src"]
    assert h.contract_errors(doc)
