"""scripts/check-layers: the component boundaries of docs/architecture.md, checked on the real tree (also a
ctest of its own) and shown to fail on a tree that crosses one."""

import subprocess
import sys
from pathlib import Path

import qk_harness as h

SCRIPT = h.SOURCE_DIR / "scripts" / "check-layers"


def run(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True)


def test_the_tree_keeps_its_layers():
    r = run(h.SOURCE_DIR)
    assert r.returncode == 0, r.stderr


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_forbidden_direction_fails(tmp_path):
    write(tmp_path, "src/record/recorder.cpp", '#include "qk/record/recorder.hpp"\n#include "qk/util/result.hpp"\n')
    write(tmp_path, "include/qk/rules/rules.hpp", '#include "qk/key/task_key.hpp"\n')
    assert run(tmp_path).returncode == 0
    # The recorder judges nothing: it may not know the rules. Audit and enforce meet only in rules.
    write(tmp_path, "src/record/sink.cpp", '#include "qk/util/io.hpp"\n\n#include "qk/rules/rules.hpp"\n')
    write(tmp_path, "include/qk/audit/classify.hpp", '#include "qk/enforce/plan.hpp"\n')
    r = run(tmp_path)
    assert r.returncode == 1
    assert "src/record/sink.cpp:3: record includes qk/rules/" in r.stderr
    assert "include/qk/audit/classify.hpp:1: audit includes qk/enforce/" in r.stderr


def test_an_unknown_component_fails(tmp_path):
    write(tmp_path, "src/newthing/a.cpp", '#include "qk/util/io.hpp"\n')
    r = run(tmp_path)
    assert r.returncode == 1 and "component 'newthing' is not in" in r.stderr
