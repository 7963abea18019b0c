"""One validator per JSON Schema under schemas/ (2020-12, checked once), and a document's errors as
readable lines. Shared by the trace and sandbox-report tests; it imports nothing of the harness."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

import jsonschema

SOURCE_DIR = Path(os.environ.get("QK_SOURCE_DIR") or Path(__file__).resolve().parents[2])


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """The validator of schemas/<name>, after checking the schema itself."""
    schema = json.loads((SOURCE_DIR / "schemas" / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def errors(name: str, doc) -> list[str]:
    """Every way `doc` breaks schemas/<name>, as readable lines (empty when valid)."""
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
        for e in sorted(validator(name).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    ]
