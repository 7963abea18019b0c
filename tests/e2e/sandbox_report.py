"""Validating --sandbox-report documents against schemas/sandbox-report.schema.json, for the tests of
the schema itself and for any test that reads a report qk wrote.

Run with Debian's /usr/bin/python3 (python3-jsonschema), as ctest does."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema

# As qk_harness finds it, without importing the harness's process and recorder machinery.
SOURCE_DIR = Path(os.environ.get("QK_SOURCE_DIR") or Path(__file__).resolve().parents[2])
SCHEMA_PATH = SOURCE_DIR / "schemas" / "sandbox-report.schema.json"

_validator = None


def schema() -> dict:
    return schema_validator().schema


def schema_validator() -> jsonschema.Draft202012Validator:
    global _validator
    if _validator is None:
        loaded = json.loads(SCHEMA_PATH.read_text())
        jsonschema.Draft202012Validator.check_schema(loaded)
        _validator = jsonschema.Draft202012Validator(loaded)
    return _validator


def schema_errors(doc) -> list[str]:
    """Every way `doc` breaks the schema, as readable lines (empty when valid)."""
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
        for e in sorted(schema_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    ]


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
