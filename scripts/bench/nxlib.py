# Helpers for scripts/bench/nx-compare, the benchmark of qk against Nx (imported, not run).
#
# - installing the pinned Nx under build/tools/nx and the environment it runs in;
# - the node script that loads Nx's project graph and hashes every task of a target through Nx's own
#   API, running nothing (Nx has no dry run);
# - timing a command with its whole process tree: this process becomes a child subreaper, so the
#   workers a command leaves behind (Nx's plugin workers) are reparented to it, reaped and counted in
#   the command's CPU time rather than in the "other work on the machine" of the disturbance check;
# - an interleaved loop in the manner of benchlib.compare (warm-up round, rotating start, disturbed
#   repetitions redone) for any set of named commands, with an output check per command;
# - a description of the machine.
import ctypes
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import benchlib
from benchlib import REPO, busy_seconds, log, noise_limit

NX_VERSION = "24.0.6"  # pinned; `npm view nx version` said this was latest on 2026-12-02
TOOLS = REPO / "build/tools"
NX_PREFIX = TOOLS / "nx"
NX_PKG = NX_PREFIX / "node_modules/nx"
TURBO_VERSION = "2.11.13"  # pinned; `npm view turbo version` said this was latest on 2026-12-04
TURBO_PREFIX = TOOLS / f"turbo-{TURBO_VERSION}"
TURBO_BIN = TURBO_PREFIX / "node_modules/.bin/turbo"
PNPM_VERSION = "9.15.9"  # turbo runs each task's script with the packageManager's binary
PNPM_PREFIX = TOOLS / f"pnpm-{PNPM_VERSION}"


def nx_installed_version() -> str | None:
    try:
        return json.loads((NX_PKG / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def ensure_nx(version: str = NX_VERSION) -> Path:
    """Installs nx@version under build/tools/nx unless it is there already; returns the package dir."""
    if nx_installed_version() != version:
        log(f"installing nx@{version} under {NX_PREFIX} (npm)")
        NX_PREFIX.mkdir(parents=True, exist_ok=True)
        p = subprocess.run(["npm", "install", "--prefix", str(NX_PREFIX), "--save-exact", "--no-audit",
                            "--no-fund", "--ignore-scripts", f"nx@{version}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if p.returncode != 0 or nx_installed_version() != version:
            sys.exit(f"nx-compare: npm install nx@{version} failed:\n{p.stdout[-3000:]}")
    return NX_PKG


def ensure_turbo() -> Path:
    """Installs turbo@TURBO_VERSION under build/tools unless it is there already; returns its binary."""
    if not TURBO_BIN.exists():
        log(f"installing turbo@{TURBO_VERSION} under {TURBO_PREFIX} (npm)")
        TURBO_PREFIX.mkdir(parents=True, exist_ok=True)
        p = subprocess.run(["npm", "install", "--prefix", str(TURBO_PREFIX), "--save-exact", "--no-audit", "--no-fund",
                            f"turbo@{TURBO_VERSION}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0 or not TURBO_BIN.exists():
            sys.exit(f"runner-compare: npm install turbo@{TURBO_VERSION} failed:\n{p.stdout[-3000:]}")
    return TURBO_BIN


def ensure_pnpm() -> Path:
    """Installs pnpm@PNPM_VERSION under build/tools unless it is there; returns its bin directory."""
    bin_dir = PNPM_PREFIX / "node_modules/.bin"
    if not (bin_dir / "pnpm").exists():
        log(f"installing pnpm@{PNPM_VERSION} under {PNPM_PREFIX} (npm)")
        PNPM_PREFIX.mkdir(parents=True, exist_ok=True)
        p = subprocess.run(["npm", "install", "--prefix", str(PNPM_PREFIX), "--save-exact", "--no-audit", "--no-fund",
                            f"pnpm@{PNPM_VERSION}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0 or not (bin_dir / "pnpm").exists():
            sys.exit(f"runner-compare: npm install pnpm@{PNPM_VERSION} failed:\n{p.stdout[-3000:]}")
    return bin_dir


def turbo_env() -> dict:
    """turbo without telemetry or update notices, printing plainly, with pnpm (its packageManager) on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TURBO_", "NX_")) and k != "CI"}
    env.update({"TURBO_TELEMETRY_DISABLED": "1", "DO_NOT_TRACK": "1", "TURBO_NO_UPDATE_NOTIFIER": "1",
                "TURBO_UI": "false", "TURBO_PRINT_VERSION_DISABLED": "1"})
    env["PATH"] = f"{ensure_pnpm()}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def link_nx_into(ws: Path) -> None:
    """Nx's CLI refuses to run in a workspace without node_modules/nx ("Could not find Nx modules"), and
    the nx:run-commands executor is resolved from there: point it at the installed package."""
    (ws / "node_modules").mkdir(exist_ok=True)
    link = ws / "node_modules/nx"
    if not link.is_symlink():
        link.symlink_to(NX_PKG)


def nx_env(ws: Path, isolate_plugins: bool = True) -> dict:
    """The environment Nx runs in: no daemon, no Nx Cloud, no TUI, the cache inside the workspace.

    NX_CACHE_DIRECTORY: Nx 24 otherwise keeps the cache and its database in ~/.nx/<workspace id>/,
    shared by every checkout; a fresh temporary workspace per run would leave a directory there each
    time. Inside the workspace (.nx/cache, git-ignored) they are removed with it, and sit where qk's
    .qk does. isolate_plugins=False sets NX_ISOLATE_PLUGINS=false: Nx's project-graph plugins (even its
    built-in package.json/project.json/js ones) then run in the main process instead of one worker
    process each."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NX_") and k not in ("CI", "FORCE_COLOR", "NO_COLOR")}
    env.update({
        "NX_DAEMON": "false",
        "NX_NO_CLOUD": "true",
        "NX_TUI": "false",
        "NX_CACHE_DIRECTORY": str(ws / ".nx/cache"),
    })
    if not isolate_plugins:
        env["NX_ISOLATE_PLUGINS"] = "false"
    return env


# Loads the project graph and hashes every task of one target with Nx's own functions, in the order
# `nx run-many` calls them (tasks-runner/run-command.js, invokeTasksRunner), and stops before the tasks
# runner: createProjectGraphAsync (in-process without the daemon; its file map and graph caches in
# .nx/workspace-data are used as by any nx command), the projects that have the target
# (runnableForTarget), createTaskGraph, createTaskHasher (the in-process hasher without the daemon),
# hashTasksThatDoNotDependOnOutputsOfOtherTasks (the batch hash run-many does up front), then
# hashTasks for any task that one deferred. What run-many does besides, and this skips: recording the
# hashes in its sqlite task-details table, the life cycles and the tasks runner. stdout: "id hash" per
# task, sorted; stderr: one line "nx-graph-hash {json}" with the time of each phase in ms.
NX_GRAPH_HASH_JS = r"""'use strict';
const t0 = performance.now();
const path = require('path');
const nxDir = process.argv[2];
const target = process.argv[3] || 'build';
const req = (p) => require(path.join(nxDir, 'dist/src', p));
const { readNxJson } = req('config/nx-json');
const { createProjectGraphAsync } = req('project-graph/project-graph');
const { runnableForTarget } = req('utils/project-graph-utils');
const { createTaskGraph } = req('tasks-runner/create-task-graph');
const { createTaskHasher } = req('hasher/create-task-hasher');
const { hashTasksThatDoNotDependOnOutputsOfOtherTasks, hashTasks } = req('hasher/hash-task');
const { getTaskSpecificEnv } = req('tasks-runner/task-env');
(async () => {
  const t1 = performance.now();
  const nxJson = readNxJson();
  const projectGraph = await createProjectGraphAsync({ exitOnError: true });
  const t2 = performance.now();
  const projects = [...runnableForTarget(projectGraph.nodes, [target])];
  const taskGraph = createTaskGraph(projectGraph, {}, projects, [target], undefined, {}, false);
  const t3 = performance.now();
  const runnerOptions = { ...(nxJson.tasksRunnerOptions?.default?.options ?? {}) };
  const hasher = createTaskHasher(projectGraph, nxJson, runnerOptions, undefined, undefined);
  const deferred = await hashTasksThatDoNotDependOnOutputsOfOtherTasks(
    hasher, projectGraph, taskGraph, nxJson, null, undefined);
  if (deferred.size > 0) {
    const envs = {};
    for (const id of deferred) envs[id] = getTaskSpecificEnv(taskGraph.tasks[id], projectGraph);
    await hashTasks(hasher, projectGraph, taskGraph, envs, null, [...deferred].map((id) => taskGraph.tasks[id]));
  }
  const t4 = performance.now();
  const tasks = Object.values(taskGraph.tasks).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  process.stdout.write(tasks.map((t) => `${t.id} ${t.hash}`).join('\n') + '\n');
  const info = { loadMs: t1 - t0, graphMs: t2 - t1, taskGraphMs: t3 - t2, hashMs: t4 - t3,
                 projects: Object.keys(projectGraph.nodes).length, tasks: tasks.length,
                 hashed: tasks.filter((t) => t.hash).length, deferred: deferred.size };
  process.stderr.write('nx-graph-hash ' + JSON.stringify(info) + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
"""


def write_graph_hash_script(directory: Path) -> Path:
    path = directory / "nx-graph-hash.js"
    path.write_text(NX_GRAPH_HASH_JS)
    return path


# --- timing a whole process tree ------------------------------------------------------------------

_PR_SET_CHILD_SUBREAPER = 36
_subreaper = False


def become_subreaper() -> bool:
    """Makes orphaned descendants of our children our children (Linux >= 3.4), so we can reap them and
    count their CPU. Returns whether it worked."""
    global _subreaper
    if not _subreaper:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _subreaper = False
    return _subreaper


def load_average() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class Sample:
    __slots__ = ("wall", "cpu", "foreign", "rc", "load", "lingering", "orphans", "extra", "recorders")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}


def run_timed(argv, cwd, env, stdout_path, stderr_path, linger=5.0) -> Sample:
    """Runs argv, stdout and stderr to files. wall: fork..wait4 of the process itself (what a user
    waits for). cpu: user+sys of it, the children it reaped, and the orphans it left, which are reaped
    here (waiting up to `linger` s after it exits; any still running then are counted in `lingering`
    and not killed). foreign: the machine's busy CPU time over the same window minus cpu."""
    become_subreaper()
    with open(stdout_path, "w") as out, open(stderr_path, "w") as err:
        load = load_average()
        b0 = busy_seconds()
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        cpu = ru.ru_utime + ru.ru_stime
        orphans, lingering = 0, 0
        deadline = time.monotonic() + linger
        while True:
            try:
                pid, _, oru = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                if time.monotonic() > deadline:
                    lingering = _count_children()
                    break
                time.sleep(0.005)
                continue
            orphans += 1
            cpu += oru.ru_utime + oru.ru_stime
        b1 = busy_seconds()
    return Sample(wall=wall, cpu=cpu, foreign=max(0.0, (b1 - b0) - cpu), rc=p.returncode, load=load,
                  lingering=lingering, orphans=orphans, extra=None, recorders=0)


def _count_children() -> int:
    me = str(os.getpid())
    n = 0
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "stat").read_text().rsplit(")", 1)[1].split()[1] == me:
                    n += 1
            except (OSError, IndexError):
                pass
    return n


# --- the interleaved loop ------------------------------------------------------------------------

class Command:
    """One side of a measurement. check(stdout, stderr, rc) returns None when the run did what it
    should (e.g. every task came from the cache), else why not: such a run is a failed benchmark.
    extra(stdout, stderr), if given, returns a dict kept with the sample (e.g. a phase breakdown)."""

    def __init__(self, label, argv, cwd, env, check, extra=None, prepare=None):
        self.label, self.argv, self.cwd, self.env, self.check = label, list(argv), cwd, env, check
        self.extra = extra
        self.prepare = prepare  # run before each timed run, untimed (e.g. delete the outputs)


def interleave(name, commands, reps, tmp: Path, warmup=1, max_retries=None, quiet_wait=10.0):
    """Runs every command once per repetition (the starting one rotates), after `warmup` untimed
    rounds; a repetition in which any run saw more than benchlib.noise_limit of other work on the
    machine is discarded and redone after waiting (up to quiet_wait s) for a quiet second, at most
    max_retries (reps/2+1) times; after that noisy samples are kept and counted."""
    labels = [c.label for c in commands]
    samples = {lb: [] for lb in labels}
    discarded, noisy_kept = [], 0
    max_retries = reps // 2 + 1 if max_retries is None else max_retries
    rep, done, attempts = -warmup, 0, 0
    while done < reps:
        k = attempts % len(commands)
        row = {}
        for c in commands[k:] + commands[:k]:
            base = f"{name}.{c.label}".replace("/", "-")
            out, err = tmp / f"{base}.stdout", tmp / f"{base}.stderr"
            if c.prepare:
                c.prepare()
            recorders = benchlib.other_recorders()  # another session's qk recorder slows every process
            s = run_timed(c.argv, c.cwd, c.env, out, err)
            s.recorders = recorders
            out_text, err_text = out.read_text(errors="replace"), err.read_text(errors="replace")
            why = c.check(out_text, err_text, s.rc)
            if not why and c.extra:
                s.extra = c.extra(out_text, err_text)
            if why:
                sys.exit(f"nx-compare {name}: {c.label} failed the check, so this is not a figure: {why}\n"
                         f"command: {' '.join(c.argv)} (cwd {c.cwd})\n"
                         f"stderr tail:\n{err.read_text(errors='replace')[-2000:]}\n"
                         f"stdout tail:\n{out.read_text(errors='replace')[-2000:]}")
            row[c.label] = s
        attempts += 1
        if rep < 0:
            rep += 1
            log(f"  {name} warm-up: " + ", ".join(f"{lb} {row[lb].wall:.3f}s" for lb in labels))
            continue
        noisy = [lb for lb, s in row.items() if s.foreign > noise_limit(s.wall) or s.recorders]
        if noisy and len(discarded) < max_retries:
            discarded.append({lb: s.as_dict() for lb, s in row.items()})
            log(f"  {name}: repetition disturbed by other work on the machine ("
                + ", ".join(f"{lb} +{row[lb].foreign:.2f} cpu-s"
                            + (f", {row[lb].recorders} qk recorder(s) loaded" if row[lb].recorders else "")
                            for lb in noisy)
                + "): discarded, redoing it")
            benchlib.wait_quiet(quiet_wait)
            continue
        noisy_kept += bool(noisy)
        for lb, s in row.items():
            samples[lb].append(s)
        done += 1
        log(f"  {name} rep {done}/{reps}: " + ", ".join(
            f"{lb} {row[lb].wall:.3f}s (cpu {row[lb].cpu:.2f}, load {row[lb].load:.2f})" for lb in labels))
    return {
        "name": name,
        "reps": reps,
        "order": "interleaved, rotating start, 1 warm-up round; a disturbed repetition is redone",
        "commands": {c.label: {"argv": c.argv, "cwd": str(c.cwd)} for c in commands},
        "median": {lb: statistics.median(s.wall for s in v) for lb, v in samples.items()},
        "cpuMedian": {lb: statistics.median(s.cpu for s in v) for lb, v in samples.items()},
        "load": {lb: [s.load for s in v] for lb, v in samples.items()},
        "samples": {lb: [s.as_dict() for s in v] for lb, v in samples.items()},
        "repetitionsWithNoisySamplesKept": noisy_kept,
        "discardedRepetitions": discarded,
    }


# --- the machine -------------------------------------------------------------------------------

def machine() -> dict:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.M)
    mem = re.search(r"^MemTotal:\s*(\d+) kB", Path("/proc/meminfo").read_text(), re.M)
    osname = "?"
    try:
        osname = re.search(r'^PRETTY_NAME="?([^"\n]*)', Path("/etc/os-release").read_text(), re.M).group(1)
    except (OSError, AttributeError):
        pass
    return {
        "cpus": os.cpu_count(),
        "model": model.group(1).strip() if model else "?",
        "hypervisor": " hypervisor" in cpuinfo,
        "memoryGiB": round(int(mem.group(1)) / 1048576, 1) if mem else None,
        "kernel": platform.release(),
        "os": osname,
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
    }


def tool_version(argv) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (p.stdout.strip() or p.stderr.strip()).splitlines()[0] if p.returncode == 0 else f"exit {p.returncode}"
    except (OSError, IndexError, subprocess.TimeoutExpired) as e:
        return f"unavailable ({e.__class__.__name__})"


def tree_revision() -> str:
    p = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    rev = p.stdout.strip() or "?"
    d = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                       capture_output=True, text=True)
    return rev + ("-dirty" if d.stdout.strip() else "")
