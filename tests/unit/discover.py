#!/usr/bin/python3
"""Registers each unit case (Catch2) as a ctest of its own, labelled by component: writes the ctest file
that tests/CMakeLists.txt includes, from what `qk_unit_tests --qk-list-cases` lists (tests/unit/main.cpp).

A case's labels are `unit`, each of its tags that names a component of src/ (`[enforce]`, `[key]`...),
and `privileged` when it is tagged so. A case with no component tag is an error, as is a name that
cannot select that one case on Catch2's command line. Each case writes its results to
<results>/<name>.xml (Catch2's XML, which scripts/test-summary counts), and one that skips prints a line
ctest reads as a skip (qk::test::skip).

Usage: discover.py --exe QK_UNIT_TESTS --source-dir SRC --results-dir DIR --working-dir DIR --output FILE"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

SKIP_REGEX = "qk_unit_tests: skipped: "  # what main.cpp prints for a case that skipped


def fail(message: str):
    sys.exit(f"tests/unit/discover.py: {message}")


def components(source_dir: Path) -> set[str]:
    return {p.name for p in (source_dir / "src").iterdir() if p.is_dir()}


def catch_spec(name: str) -> str:
    """The test spec that selects exactly this case (Catch2 compares names whatever their case): the name
    quoted, so that [ ] ~ and a leading " are plain characters, with \\ " and , escaped by a backslash.
    A * at either end or a leading exclude: Catch2 would read as an operator even there."""
    if name.startswith(("exclude:", "*")) or name.endswith("*"):
        raise ValueError("Catch2 cannot select it by name alone (a * at an end, or exclude: first)")
    return '"' + re.sub(r'([\\",])', r"\\\1", name) + '"'


def result_file(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")[:80]
    return f"{slug}-{hashlib.sha1(name.encode()).hexdigest()[:8]}.xml"


def bracket(text: str) -> str:
    """text as a CMake bracket argument, taken as it is."""
    level = 0
    while f"]{'=' * level}]" in text or text.endswith("]" + "=" * level):
        level += 1
    return f"[{'=' * level}[{text}]{'=' * level}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    for opt in ("--exe", "--source-dir", "--results-dir", "--working-dir", "--output"):
        ap.add_argument(opt, required=True)
    args = ap.parse_args()

    proc = subprocess.run([args.exe, "--qk-list-cases"], capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"{args.exe} --qk-list-cases failed (exit {proc.returncode}): {proc.stderr.strip()}")
    known = components(Path(args.source_dir))
    results = Path(args.results_dir)
    problems, seen, lines = [], {}, []
    for line in proc.stdout.splitlines():
        fields = line.split("\t")
        if len(fields) != 3:
            fail(f"cannot read this line of --qk-list-cases (a tab in a case's name?): {line!r}")
        name, tags, source = fields
        where = f"{Path(source).name}: \"{name}\""
        tag_list = [t.lower() for t in re.findall(r"\[([^\]]*)\]", tags)]
        labels = [t for t in tag_list if t in known]
        if not labels:
            problems.append(f"{where} {tags}: no tag names a component of src/ ({', '.join(sorted(known))})")
            continue
        if "privileged" in tag_list:
            labels.append("privileged")
        try:
            spec = catch_spec(name)
        except ValueError as e:
            problems.append(f"{where}: {e}")
            continue
        if name.lower() in seen:  # Catch2 compares names whatever their case
            problems.append(f"{where}: the same name as {seen[name.lower()]}, whatever the case")
            continue
        seen[name.lower()] = where
        test = bracket(f"unit: {name}")
        out = results / result_file(name)
        # --warn NoTests: a spec that selects nothing fails rather than pass having run nothing.
        lines.append(f"add_test({test} {bracket(args.exe)} {bracket(spec)} --warn NoTests --reporter xml "
                     f"--out {bracket(str(out))})")
        lines.append(
            f"set_tests_properties({test} PROPERTIES LABELS {bracket(';'.join(['unit', *labels]))} "
            f"WORKING_DIRECTORY {bracket(args.working_dir)} SKIP_REGULAR_EXPRESSION {bracket(SKIP_REGEX)})"
        )
    if problems:
        fail("each unit case needs a component tag and a name Catch2 can select:\n  " + "\n  ".join(problems))
    if not lines:
        fail(f"{args.exe} lists no case")
    results.mkdir(parents=True, exist_ok=True)
    text = "# Written by tests/unit/discover.py: one ctest per unit case.\n" + "\n".join(lines) + "\n"
    Path(args.output).write_text(text)


if __name__ == "__main__":
    main()
