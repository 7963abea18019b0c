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
