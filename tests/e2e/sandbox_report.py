"""Validating --sandbox-report documents against schemas/sandbox-report.schema.json, for the tests of
the schema itself and for any test that reads a report qk wrote.

Run with Debian's /usr/bin/python3 (python3-jsonschema), as ctest does."""

from __future__ import annotations

import schema_check

SCHEMA = "sandbox-report.schema.json"


def schema() -> dict:
    return schema_check.validator(SCHEMA).schema


def schema_errors(doc) -> list[str]:
    """Every way `doc` breaks the schema, as readable lines (empty when valid)."""
    return schema_check.errors(SCHEMA, doc)


def order_errors(doc) -> list[str]:
    """What the schema cannot say: tasks keyed in sorted order, every list of paths sorted, readByMany
    sorted by path. Meaningful once schema_errors(doc) is empty."""
    errors = []
    tasks = list(doc.get("tasks", {}))
    if tasks != sorted(tasks):
        errors.append("tasks: not in sorted order")
    for task, entry in doc.get("tasks", {}).items():
        findings = entry.get("findings", {})
        lists = [(kind, paths) for kind, paths in findings.items() if kind != "dependencyReads"]
        lists += [(f"dependencyReads/{p}", paths) for p, paths in findings.get("dependencyReads", {}).items()]
        for kind, paths in lists:
            if paths != sorted(paths):
                errors.append(f"tasks/{task}/findings/{kind}: not sorted")
    paths = [entry.get("path") for entry in doc.get("readByMany", [])]
    if paths != sorted(paths, key=str):
        errors.append("readByMany: not sorted by path")
    return errors


def provenance_errors(doc) -> list[str]:
    """A report this machine wrote: its run names one shard, and each task's provenance names this
    machine, the shard, and the recorder the report names for the tasks that were recorded."""
    import os
    import socket

    errors = []
    run = doc["run"]
    if len(run["shards"]) != 1:
        errors.append(f"run/shards: one machine's report names {run['shards']}")
    for task, entry in doc["tasks"].items():
        p = entry["provenance"]
        if p["host"] != socket.gethostname() or p["kernel"] != os.uname().release:
            errors.append(f"tasks/{task}/provenance: not this machine: {p}")
        if p["shard"] != run["shards"][0]:
            errors.append(f"tasks/{task}/provenance/shard: {p['shard']}, the run's is {run['shards'][0]}")
        recorded = entry["status"] in ("audited", "enforced") and doc["recorder"] is not None
        if recorded and p["recorder"] != doc["recorder"]:
            errors.append(f"tasks/{task}/provenance/recorder: {p['recorder']}, the report's is {doc['recorder']}")
        if entry["status"] == "enforced" and p["overlay"] != ("landlockOnly" not in doc):
            errors.append(f"tasks/{task}/provenance/overlay: {p['overlay']}, yet the report says "
                          f"landlockOnly: {doc.get('landlockOnly')}")
        if entry["status"] != "enforced" and p["overlay"] is not None:
            errors.append(f"tasks/{task}/provenance/overlay: {p['overlay']} for a task not enforced")
        if doc.get("landlockAbi") and p["landlockAbi"] != doc["landlockAbi"]:
            errors.append(f"tasks/{task}/provenance/landlockAbi: {p['landlockAbi']}, the run used {doc['landlockAbi']}")
        if entry["status"] in ("restored", "unsandboxed", "refused") and p["recorder"] is not None:
            errors.append(f"tasks/{task}/provenance/recorder: {p['recorder']} for a task not recorded")
    return errors


def checked(doc) -> dict:
    """`doc` validated (schema, order, provenance), without what names the run and the machine (run, each
    task's hash and provenance), for tests that compare findings."""
    import copy

    problems = schema_errors(doc) + order_errors(doc) + provenance_errors(doc)
    assert problems == [], "\n".join(problems)
    doc = copy.deepcopy(doc)
    doc.pop("run")
    for entry in doc["tasks"].values():
        entry.pop("provenance")
        entry.pop("hash", None)
    return doc
