# Shared helpers for the benchmarks in scripts/bench (imported, not run).
#
# A workload is one command line. `compare()` runs it untraced (the plain command), under
# `qk-trace --recorder ebpf --json F` and under `qk-trace --recorder strace --json F`, interleaved:
# every repetition runs each mode once (the starting mode rotates from one repetition to the next so
# that no mode always runs right after another), after one untimed warm-up round. It reports the
# median wall time per mode, the ratio of each traced median to the untraced one, the median CPU time
# (user+sys of the measured process and the children it reaped) and whether every traced run's JSON
# said `complete: true`.
#
# Wall time is measured around fork..wait4 of the outermost process, so qk-trace's own start-up
# (loading and attaching the BPF programs, creating the cgroup) and its JSON writing are inside the
# traced figures: that is the cost a user pays.
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODES = ("untraced", "ebpf", "strace")


def qk_trace() -> str:
    path = os.environ.get("QK_TRACE") or str(REPO / "build/default/qk-trace")
    if not os.access(path, os.X_OK):
        sys.exit(f"bench: {path} not found; build it first "
                 "(cmake --preset default && cmake --build build/default -j2) or set QK_TRACE")
    return path


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def recorder_works(recorder: str) -> tuple[bool, str]:
    """Whether `qk-trace --recorder R -- true` records; the reason if not."""
    p = subprocess.run([qk_trace(), "--recorder", recorder, "--", "true"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return p.returncode == 0, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"


def run_timed(argv, cwd=None, stderr_path=None):
    """Runs argv with stdout to /dev/null; returns (wall seconds, cpu seconds, exit status)."""
    err = open(stderr_path, "w") if stderr_path else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stderr_path:
            err.close()
    return wall, ru.ru_utime + ru.ru_stime, p.returncode


def traced_argv(mode, argv, json_path):
    if mode == "untraced":
        return list(argv)
    return [qk_trace(), "--recorder", mode, "--json", json_path, "--"] + list(argv)


def compare(name, argv, reps, modes=MODES, cwd=None, before_each=None, warmup=1):
    """Runs the workload interleaved; returns a dict of results (see module comment)."""
    tmp = Path(tempfile.mkdtemp(prefix="qk-bench-"))
    samples = {m: [] for m in modes}
    cpu = {m: [] for m in modes}
    incomplete = {m: [] for m in modes}
    try:
        for rep in range(-warmup, reps):
            k = rep % len(modes)
            order = list(modes[k:]) + list(modes[:k])
            for mode in order:
                if before_each:
                    before_each()
                jpath = str(tmp / f"{mode}.json")
                epath = str(tmp / f"{mode}.stderr")
                wall, cputime, rc = run_timed(traced_argv(mode, argv, jpath), cwd=cwd, stderr_path=epath)
                if rc != 0:
                    sys.exit(f"bench {name}: {mode} run failed with {rc}:\n{Path(epath).read_text()[-2000:]}")
                if mode != "untraced":
                    doc = json.loads(Path(jpath).read_text())
                    if not doc.get("complete", False):
                        incomplete[mode].append(doc.get("incompleteReasons"))
                if rep >= 0:
                    samples[mode].append(wall)
                    cpu[mode].append(cputime)
            if rep >= 0:
                log(f"  {name} rep {rep + 1}/{reps}: " +
                    ", ".join(f"{m} {samples[m][-1]:.3f}s" for m in modes))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {m: statistics.median(samples[m]) for m in modes}
    return {
        "name": name,
        "command": list(argv),
        "cwd": cwd,
        "reps": reps,
        "order": "interleaved, rotating start, 1 warm-up round",
        "samples": samples,
        "median": med,
        "cpuMedian": {m: statistics.median(cpu[m]) for m in modes},
        "ratio": {m: med[m] / med["untraced"] for m in modes if "untraced" in med},
        "incomplete": {m: v for m, v in incomplete.items() if v},
    }


def parse_args(default_reps, argv=None):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=default_reps, help=f"timed repetitions (default {default_reps})")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of untraced,ebpf,strace")
    ap.add_argument("--json", help="write the results as JSON to this file")
    args = ap.parse_args(argv)
    args.modes = tuple(m for m in args.modes.split(",") if m)
    for m in args.modes:
        if m not in MODES:
            ap.error(f"unknown mode {m}")
    for m in args.modes:
        if m != "untraced":
            ok, why = recorder_works(m)
            if not ok:
                sys.exit(f"bench: --recorder {m} cannot record here: {why}\n"
                         f"(run with --modes untraced,ebpf to skip it)")
    return args


def emit(result, args):
    modes = list(result["median"])
    print(f"{result['name']}: median of {result['reps']} " +
          ", ".join(f"{m} {result['median'][m]:.3f}s (x{result['ratio'].get(m, float('nan')):.3f})"
                    for m in modes))
    for m, v in result["incomplete"].items():
        print(f"  WARNING: {len(v)} {m} run(s) not complete: {v[0]}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
