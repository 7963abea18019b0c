"""The differential test of the sandbox's modes (issue 37: enforce is faithful, a refusal is visible, docs/architecture.md): every task shape of a
corpus, and of a corpus generated at random, runs without the sandbox (plain), under audit, under enforce
over the overlay and under enforce held by Landlock alone (QK_SANDBOX_OVERLAY=0), each mode on a fresh copy
of one workspace, in one `qk run-many --skip-cache` per mode.

The promise, per task and mode: either its declared outputs (content, mode bits, link targets) and its exit
status are what they are in the plain run, or the run names a refusal for it. Precisely:

- audit changes nothing: outputs, statuses, and the whole workspace as the plain run leaves them;
- under enforce, a task whose outputs or status differ from plain's has a refusal in --sandbox-report
  (refusedReads, refusedWrites, discardedWrites, ...) and the audit lists a finding enforce refuses for it;
  under Landlock alone, a shape marked with a documented limit of Landlock alone needs only the refusal;
- a task the audit finds going beyond what enforce allows (docs/sandbox.md's table; TaskFindings::went_beyond)
  is never "kept to what it declares" under enforce: a refusal is named for it, whether it failed or not;
- a refusal is named only where the audit finds what enforce refuses (or a marked limit of Landlock alone):
  nothing qk does is reported as the task's.

The corpus also runs under enforce over the overlay with a helper exec'd for each command (QK_SANDBOX_SERVE=0)
instead of forked by the run's one helper: the two leave the same workspace, statuses and report.

QK_MODES_SEED sets the random corpus's seed (printed in each of its test ids and failures), QK_MODES_N how
many shapes it has (30)."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import time
from pathlib import Path

import pytest

import qk_harness as h
import sandbox_report
import task_shapes as ts
from audit_workspace import qk
from enforce_workspace import snapshot

pytestmark = pytest.mark.privileged

MODES = ("plain", "audit", "overlay", "landlock")
JUDGED = MODES[1:]
LABEL = {"plain": "plain", "audit": "audit", "overlay": "enforce over the overlay",
         "landlock": "enforce under Landlock alone",
         "exec-each": "enforce over the overlay, a helper exec'd for each command"}
# What enforce names for a task it held back (docs/sandbox.md, --sandbox-report); replacedReads is another
# task's doing, not this one's.
REFUSALS = ("refusedReads", "refusedWrites", "discardedWrites", "refusedUnplaced", "refusedOutside", "refusedCalls")
# The audit's kinds that count as going beyond what enforce allows (rules::enforce_allows): .git and dotenv
# reads, installed packages and temporary files are allowed, and so are writes in .git.
BEYOND = ("readsOutsideInputs", "tsconfigReads", "strayWrites", "manifestReads", "toolchainReads", "dependencyReads")

SEED = int(os.environ.get("QK_MODES_SEED") or random.SystemRandom().randrange(1, 10**6))
N_RANDOM = int(os.environ.get("QK_MODES_N") or 30)


@dataclasses.dataclass
class ModeRun:
    mode: str
    ws: Path                  # the workspace as the run left it
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    statuses: dict[str, str]  # task -> succeeded / failed / ... (--report)
    sandbox: dict | None      # --sandbox-report, or None for the plain run
    problems: list[str]       # what is wrong with the run as a whole

    def task_lines(self, task: str, limit: int = 12) -> list[str]:
        """What the run printed about the task (its output is prefixed with its id)."""
        lines = [l for l in (self.stdout + self.stderr).splitlines() if task in l]
        return lines[:limit] + ([f"… {len(lines) - limit} more"] if len(lines) > limit else [])


def run_mode(base: Path, shapes: list[ts.Shape], mode: str) -> ModeRun:
    """The corpus copied fresh to base/ws, run in one mode, the workspace moved to base/ws-<mode> after: every
    mode runs at the same path, so what tasks write of their paths compares."""
    ws = base / "ws"
    subprocess.run(["cp", "-a", str(base / "template"), str(ws)], check=True)
    run_report = base / f"{mode}-run.json"
    sandbox_path = base / f"{mode}-sandbox.json"
    args = ["run-many", "-t", ts.TARGET, "--skip-cache", "--report", str(run_report)]
    env = {}
    if mode == "audit":
        args += ["--sandbox", "--sandbox-report", str(sandbox_path)]
    elif mode in ("overlay", "landlock", "exec-each"):
        args += ["--sandbox=enforce", "--sandbox-report", str(sandbox_path)]
        if mode == "landlock":
            env["QK_SANDBOX_OVERLAY"] = "0"
        if mode == "exec-each":
            env["QK_SANDBOX_SERVE"] = "0"
    start = time.monotonic()
    r = qk(ws, *args, env=env, timeout=900)
    seconds = time.monotonic() - start
    os.rename(ws, base / f"ws-{mode}")
    problems = []
    statuses = {}
    if run_report.exists():
        statuses = {t: e["status"] for t, e in json.loads(run_report.read_text())["tasks"].items()}
    else:
        problems.append("no --report written")
    sandbox = None
    if mode != "plain":
        if sandbox_path.exists():
            sandbox = json.loads(sandbox_path.read_text())
            problems += sandbox_report.schema_errors(sandbox) + sandbox_report.order_errors(sandbox)
            if mode == "landlock" and not sandbox.get("landlockOnly"):
                problems.append(f"QK_SANDBOX_OVERLAY=0, yet the report has no landlockOnly: {sandbox.get('landlockOnly')}")
            if mode in ("overlay", "exec-each") and sandbox.get("landlockOnly"):
                problems.append(f"enforce did not run over the overlay: landlockOnly: {sandbox['landlockOnly']}")
        else:
            problems.append("no --sandbox-report written")
    for s in shapes:
        if s.task not in statuses:
            problems.append(f"{s.task}: not in --report")
        if sandbox is not None:
            want = "audited" if mode == "audit" else "enforced"
            entry = sandbox["tasks"].get(s.task)
            if entry is None or entry["status"] != want:
                problems.append(f"{s.task}: {entry and entry['status']} in --sandbox-report, not {want}"
                                + (f" ({entry['reason']})" if entry and entry.get("reason") else ""))
    return ModeRun(mode, base / f"ws-{mode}", [str(x) for x in r.args], r.returncode, r.stdout, r.stderr, seconds,
                   statuses, sandbox, problems)


def run_all(base: Path, shapes: list[ts.Shape], modes: tuple[str, ...] = MODES) -> dict[str, ModeRun]:
    h.require_privileges(None)
    if not os.access(h.BUILD_DIR / "qk", os.X_OK):
        pytest.fail(f"{h.BUILD_DIR / 'qk'} is not built (set QK_BUILD_DIR)", pytrace=False)
    ts.write_workspace(base / "template", shapes)
    runs = {mode: run_mode(base, shapes, mode) for mode in modes}
    print(f"\n{base}: " + ", ".join(f"{m} {r.seconds:.1f} s" for m, r in runs.items()))
    return runs


def findings(run: ModeRun, task: str) -> dict:
    entry = (run.sandbox or {}).get("tasks", {}).get(task) or {}
    return entry.get("findings", {})


def refusals(found: dict) -> dict:
    return {k: found[k] for k in REFUSALS if found.get(k)}


def beyond(found: dict) -> dict:
    """The audit's findings that enforce does not allow."""
    out = {}
    for k in BEYOND:
        v = found.get(k)
        if k == "strayWrites" and v:
            v = [p for p in v if p != ".git" and not p.startswith(".git/") and "/.git/" not in p]
        if v:
            out[k] = v
    return out


def judge(shape: ts.Shape, mode: str, runs: dict[str, ModeRun]) -> tuple[str, list[str]] | None:
    """None when the task keeps the promise in this mode, else a one-line verdict and the details."""
    plain, run, audit = runs["plain"], runs[mode], runs["audit"]
    task = shape.task
    diff = ts.tree_diff(ts.trees(plain.ws, shape), ts.trees(run.ws, shape), LABEL[mode])
    before, now = plain.statuses.get(task), run.statuses.get(task)
    diverged = bool(diff) or before != now
    verdicts = []
    if mode == "audit":
        if diverged:
            verdicts.append("audit changed the task's outcome")
    else:
        named = refusals(findings(run, task))
        if mode == "landlock" and shape.landlock_limit == ts.MADE_OUTPUT:
            # Not a refusal: the output qk made for Landlock, which the run names as it keeps the result out
            # of the cache.
            named = named or any("qk made its output" in line for line in run.task_lines(task, 10**6))
        found = beyond(findings(audit, task))
        limit = shape.landlock_limit if mode == "landlock" else None
        if mode == "overlay" and shape.overlay_limit:
            # The stand-in's mode and owner are the one thing the overlay shows otherwise (see the shape).
            diverged = False
            limit = shape.overlay_limit
        if diverged and not named:
            verdicts.append("diverged from plain with no refusal named")
        elif diverged and not found and not limit:
            verdicts.append("diverged from plain; a refusal is named, but the audit finds nothing enforce refuses")
        if found and not named:
            verdicts.append("the audit finds what enforce refuses, yet enforce named no refusal"
                            + (" and calls it kept to what it declares" if now == "succeeded" else f" (it {now})"))
        if named and not found and not limit and not diverged:
            verdicts.append("enforce named a refusal where the audit finds nothing enforce refuses")
    if not verdicts:
        return None
    details = [shape.describe(), f"status: plain {before}, {LABEL[mode]} {now}"]
    if diff:
        details.append("declared outputs differ:")
        details += ["    " + d for d in diff]
    elif not diverged:
        details.append("declared outputs and status: as plain")
    if mode != "audit":
        details.append(f"{LABEL[mode]} findings: {json.dumps(findings(run, task))}")
    details.append(f"audit findings: {json.dumps(findings(audit, task))}")
    for m in ("plain", mode):
        lines = runs[m].task_lines(task)
        if lines:
            details.append(f"{LABEL[m]} printed:")
            details += ["    " + l for l in lines]
    return "; ".join(verdicts), details


def check(shape: ts.Shape, mode: str, runs: dict[str, ModeRun], where: str = "") -> None:
    for m in ("plain", mode):
        mine = [p for p in runs[m].problems if p.startswith(shape.task + ":")]
        if mine:
            pytest.fail(f"{shape.name} under {LABEL[m]}: " + "; ".join(mine) + where, pytrace=False)
    verdict = judge(shape, mode, runs)
    if verdict is not None:
        head, details = verdict
        pytest.fail(f"{shape.name} under {LABEL[mode]}: {head}{where}\n" + "\n".join("  " + d for d in details),
                    pytrace=False)


def check_run(runs: dict[str, ModeRun], mode: str) -> None:
    run = runs[mode]
    assert not run.problems, f"{LABEL[mode]}: {' '.join(run.argv)}\n  " + "\n  ".join(run.problems) + \
        f"\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"


def check_audit_changes_nothing(runs: dict[str, ModeRun]) -> None:
    """The whole workspace as plain leaves it, but qk's own state."""
    plain, audit = snapshot(runs["plain"].ws), snapshot(runs["audit"].ws)
    diff = [f"{p}: plain {ts.show(plain.get(p))}, audit {ts.show(audit.get(p))}"
            for p in sorted(set(plain) | set(audit)) if plain.get(p) != audit.get(p)]
    assert not diff, "audit left the workspace otherwise than the plain run:\n  " + "\n  ".join(diff)


# ---------------------------------------------------------------------------------------------------------
# The corpus

CORPUS = ts.corpus()


@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory):
    return run_all(tmp_path_factory.mktemp("corpus"), CORPUS, MODES + ("exec-each",))


def test_the_corpus_has_forty_shapes_or_more():
    assert len(CORPUS) >= 40, len(CORPUS)


@pytest.mark.parametrize("mode", MODES)
def test_corpus_run(corpus_runs, mode):
    check_run(corpus_runs, mode)


def test_corpus_audit_changes_nothing(corpus_runs):
    check_audit_changes_nothing(corpus_runs)


@pytest.mark.parametrize("mode", JUDGED)
@pytest.mark.parametrize("shape", CORPUS, ids=lambda s: s.name)
def test_corpus_shape(corpus_runs, shape, mode):
    check(shape, mode, corpus_runs)


def test_corpus_served_and_exec_each_agree(corpus_runs):
    """The run's one helper forking each command's (the default) against a helper exec'd for each: the
    same workspace, statuses and report, task by task."""
    check_run(corpus_runs, "exec-each")
    served, each = corpus_runs["overlay"], corpus_runs["exec-each"]
    a, b = snapshot(served.ws), snapshot(each.ws)
    diff = [f"{p}: served {ts.show(a.get(p))}, exec'd {ts.show(b.get(p))}"
            for p in sorted(set(a) | set(b)) if a.get(p) != b.get(p)]
    assert not diff, "the workspaces differ:\n  " + "\n  ".join(diff)
    assert served.statuses == each.statuses
    tasks = sorted(served.sandbox["tasks"])
    assert tasks == sorted(each.sandbox["tasks"])
    for t in tasks:
        mine, theirs = served.sandbox["tasks"][t], each.sandbox["tasks"][t]
        assert (mine["status"], mine.get("findings")) == (theirs["status"], theirs.get("findings")), t


# ---------------------------------------------------------------------------------------------------------
# Random shapes (a property test): the same modes, the same promise

RANDOM = ts.random_corpus(SEED, N_RANDOM)


@pytest.fixture(scope="module")
def random_runs(tmp_path_factory):
    print(f"\nQK_MODES_SEED={SEED} QK_MODES_N={N_RANDOM}")
    return run_all(tmp_path_factory.mktemp(f"random-{SEED}"), RANDOM)


@pytest.mark.parametrize("mode", MODES)
def test_random_run(random_runs, mode):
    check_run(random_runs, mode)


def test_random_audit_changes_nothing(random_runs):
    check_audit_changes_nothing(random_runs)


@pytest.mark.parametrize("mode", JUDGED)
@pytest.mark.parametrize("shape", RANDOM, ids=lambda s: f"seed{SEED}-{s.name}")
def test_random_shape(random_runs, shape, mode):
    check(shape, mode, random_runs, where=f" (QK_MODES_SEED={SEED} QK_MODES_N={N_RANDOM} makes it again)")
