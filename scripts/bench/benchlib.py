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
# The machine may be shared (another session compiling, or another qk recorder loaded, whose sys_exit
# program slows every process). Each run also measures the CPU the rest of the machine used meanwhile
# (/proc/stat busy time minus the run's own rusage); a repetition in which any run saw more than
# noise_limit() of it, or started while another qk recorder was loaded, is discarded whole and redone
# after a quiet second (at most reps/2+1 times; what is discarded and what noisy samples had to be kept
# are in the results).
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
# "ebpf-base": the eBPF recorder of another qk-trace binary (QK_TRACE_BASE), to measure a change side by
# side with what it replaces, in the same interleaved repetitions.
OPTIONAL_MODES = ("ebpf-base",)


def qk_trace(mode: str = "ebpf") -> str:
    if mode == "ebpf-base":
        path = os.environ.get("QK_TRACE_BASE", "")
        if not os.access(path, os.X_OK):
            sys.exit("bench: mode ebpf-base needs QK_TRACE_BASE, the qk-trace binary to compare with")
        return path
    path = os.environ.get("QK_TRACE") or str(REPO / "build/default/qk-trace")
    if not os.access(path, os.X_OK):
        sys.exit(f"bench: {path} not found; build it first "
                 "(cmake --preset default && cmake --build build/default -j2) or set QK_TRACE")
    return path


def recorder_of(mode: str) -> str:
    return "ebpf" if mode == "ebpf-base" else mode


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def recorder_works(mode: str) -> tuple[bool, str]:
    """Whether `qk-trace --recorder R -- true` records; the reason if not."""
    p = subprocess.run([qk_trace(mode), "--recorder", recorder_of(mode), "--", "true"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return p.returncode == 0, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"


_TICK = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU time spent busy by the whole machine so far (all CPUs, from /proc/stat): user, nice, system,
    irq and softirq. Not steal: time the hypervisor gave another guest is no work on this machine
    (though it slows us, and shows as a slower sample, not as a disturbed one); guest is inside user."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / _TICK


def loaded_recorders() -> int:
    try:
        p = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True, timeout=10)
        return sum(1 for prog in json.loads(p.stdout or "[]") if prog.get("name") == "qk_sys_exit")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


def other_recorders() -> int:
    """How many qk recorders (qk_sys_exit BPF programs) are loaded by someone else. Their sys_exit
    program runs for every syscall on the machine, so one loaded by another session slows the
    untraced runs too. Our own previous run's programs are freed a few ms after it exits: wait for
    that (up to a second) before counting."""
    deadline = time.monotonic() + 1.0
    while (n := loaded_recorders()) > 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    return n


def run_timed(argv, cwd=None, stderr_path=None):
    """Runs argv with stdout to /dev/null; returns (wall s, cpu s, foreign cpu s, exit status).

    cpu is user+sys of the process, its threads and the children it reaped (for qk-trace: its loader,
    its consumer thread and the whole traced command). foreign is the machine's busy time during the
    run minus that: other sessions' work, kernel threads, and anything our process tree did not reap;
    a large value means the sample was disturbed."""
    err = open(stderr_path, "w") if stderr_path else subprocess.DEVNULL
    try:
        b0 = busy_seconds()
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        b1 = busy_seconds()
        p.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stderr_path:
            err.close()
    cpu = ru.ru_utime + ru.ru_stime
    return wall, cpu, max(0.0, (b1 - b0) - cpu), p.returncode


def traced_argv(mode, argv, json_path):
    if mode == "untraced":
        return list(argv)
    return [qk_trace(mode), "--recorder", recorder_of(mode), "--json", json_path, "--"] + list(argv)


def noise_limit(wall):
    """CPU seconds of other work during a sample above which the sample counts as disturbed: 50 ms
    plus 3% of one CPU over the run. An idle machine stays at 0-20 ms (kernel threads, accounting)."""
    return 0.05 + 0.03 * wall


def wait_quiet(max_wait=30.0):
    """Waits (up to max_wait s) for a second in which the machine is at most 5% busy."""
    deadline = time.monotonic() + max_wait
    while time.monotonic() < deadline:
        b0 = busy_seconds()
        time.sleep(1.0)
        if busy_seconds() - b0 < 0.05:
            return


def compare(name, argv, reps, modes=MODES, cwd=None, before_each=None, warmup=1, max_retries=None):
    """Runs the workload interleaved; returns a dict of results (see module comment)."""
    tmp = Path(tempfile.mkdtemp(prefix="qk-bench-"))
    samples = {m: [] for m in modes}
    cpu = {m: [] for m in modes}
    foreign = {m: [] for m in modes}
    incomplete = {m: [] for m in modes}
    disturbed = 0  # kept samples that started while another session's recorder was loaded
    noisy_kept = 0  # kept samples with more other work than noise_limit (retries exhausted)
    discarded = []  # repetitions redone because a sample in them was disturbed
    max_retries = reps // 2 + 1 if max_retries is None else max_retries
    try:
        rep, done, attempts = -warmup, 0, 0
        while done < reps:
            k = attempts % len(modes)
            order = list(modes[k:]) + list(modes[:k])
            row = {}
            for mode in order:
                if before_each:
                    before_each()
                jpath = str(tmp / f"{mode}.json")
                epath = str(tmp / f"{mode}.stderr")
                busy_before = other_recorders()
                wall, cputime, other, rc = run_timed(traced_argv(mode, argv, jpath), cwd=cwd, stderr_path=epath)
                if rc != 0:
                    sys.exit(f"bench {name}: {mode} run failed with {rc}:\n{Path(epath).read_text()[-2000:]}")
                if mode != "untraced":
                    doc = json.loads(Path(jpath).read_text())
                    if not doc.get("complete", False):
                        incomplete[mode].append(doc.get("incompleteReasons"))
                row[mode] = (wall, cputime, other, busy_before)
            attempts += 1
            if rep < 0:
                rep += 1
                continue
            noisy = [m for m, (wall, _, other, busy) in row.items() if busy or other > noise_limit(wall)]
            if noisy and len(discarded) < max_retries:
                discarded.append({m: {"wall": v[0], "foreignCpu": v[2], "otherRecorder": bool(v[3])}
                                  for m, v in row.items()})
                log(f"  {name}: repetition disturbed by other work on the machine ({', '.join(noisy)}): "
                    f"discarded, waiting for a quiet second and redoing it")
                wait_quiet()
                continue
            for mode, (wall, cputime, other, busy) in row.items():
                disturbed += bool(busy)
                noisy_kept += other > noise_limit(wall)
                samples[mode].append(wall)
                cpu[mode].append(cputime)
                foreign[mode].append(other)
            done += 1
            log(f"  {name} rep {done}/{reps}: " + ", ".join(f"{m} {samples[m][-1]:.3f}s" for m in modes))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {m: statistics.median(samples[m]) for m in modes}
    # Each repetition ran every mode back to back: the per-repetition ratio cancels slow drifts of
    # the machine (a neighbour's load) that the ratio of medians does not.
    paired = {m: statistics.median(samples[m][i] / samples["untraced"][i] for i in range(reps))
              for m in modes if "untraced" in modes}
    return {
        "name": name,
        "command": list(argv),
        "cwd": cwd,
        "reps": reps,
        "order": "interleaved, rotating start, 1 warm-up round; a disturbed repetition is redone",
        "samples": samples,
        "median": med,
        "cpuMedian": {m: statistics.median(cpu[m]) for m in modes},
        "foreignCpuMedian": {m: statistics.median(foreign[m]) for m in modes},
        "foreignCpuMax": max(max(v) for v in foreign.values()),
        "cpuSamples": cpu,
        "foreignCpuSamples": foreign,
        "ratio": {m: med[m] / med["untraced"] for m in modes if "untraced" in med},
        "pairedRatio": paired,
        "incomplete": {m: v for m, v in incomplete.items() if v},
        "samplesWithAnotherRecorderLoaded": disturbed,
        "noisySamplesKept": noisy_kept,
        "discardedRepetitions": discarded,
    }


def parse_args(default_reps, argv=None):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=default_reps, help=f"timed repetitions (default {default_reps})")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="comma-separated subset of untraced,ebpf,strace,ebpf-base (QK_TRACE_BASE)")
    ap.add_argument("--json", help="write the results as JSON to this file")
    args = ap.parse_args(argv)
    args.modes = tuple(m for m in args.modes.split(",") if m)
    for m in args.modes:
        if m not in MODES + OPTIONAL_MODES:
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
    print("  median of per-repetition ratios: " +
          ", ".join(f"{m} x{r:.3f}" for m, r in result["pairedRatio"].items()) +
          "; median cpu (s): " + ", ".join(f"{m} {c:.3f}" for m, c in result["cpuMedian"].items()) +
          f"; other cpu on the machine during a run: up to {result['foreignCpuMax']:.2f}s")
    if result["discardedRepetitions"]:
        print(f"  note: {len(result['discardedRepetitions'])} repetition(s) disturbed by other work were redone")
    if result["noisySamplesKept"]:
        print(f"  WARNING: {result['noisySamplesKept']} kept sample(s) were disturbed by other work (retries used up)")
    if result["samplesWithAnotherRecorderLoaded"]:
        print(f"  WARNING: {result['samplesWithAnotherRecorderLoaded']} sample(s) started while another "
              "qk recorder was loaded on the machine (its BPF programs slow every process): rerun when idle")
    for m, v in result["incomplete"].items():
        print(f"  WARNING: {len(v)} {m} run(s) not complete: {v[0]}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
