"""Task shapes for the differential test of the sandbox's modes (test_modes_agree.py, issue 37): small real
commands (sh, coreutils, tar, find, make, node), each the one target of a project of its own, so that a
whole corpus is one workspace run in one `qk run-many` per mode; the workspace written from them; what a
run leaves of each task's declared outputs; and a generator of random shapes from a small grammar.

A shape's command runs in its project's directory. Its paths (files, outputs, warm paths) are relative to
the project's root; `root_files` are relative to the workspace root."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import random
import stat
import tarfile
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Link:
    """A symbolic link, by its text."""
    target: str


@dataclasses.dataclass(frozen=True)
class Mode:
    """A file with mode bits of its own."""
    text: str
    mode: int


DEFAULT_INPUTS = ["{projectRoot}/src/**/*"]
BASE_FILES = {"src/a.txt": "alpha\n", "src/b.txt": "beta\n", "README.md": "# readme, no input\n"}
TARGET = "t"


@dataclasses.dataclass
class Shape:
    name: str            # the project's name
    about: str           # what it shows, for the report
    command: str         # run with /bin/sh in the project's directory
    files: dict = dataclasses.field(default_factory=dict)      # project-relative: str | Link | Mode | None (left out)
    inputs: list = dataclasses.field(default_factory=lambda: list(DEFAULT_INPUTS))
    outputs: list = dataclasses.field(default_factory=lambda: ["out"])  # project-relative
    warm: list = dataclasses.field(default_factory=list)       # project-relative "qk:warm" paths
    ignore_reads: list = dataclasses.field(default_factory=list)
    depends: list = dataclasses.field(default_factory=list)    # project names its package.json depends on
    package_json: bool = True
    root: str | None = None  # workspace-relative; p/<name> unless set (a nested project)
    # A documented limit of Landlock alone this shape runs into (docs/sandbox.md, "Landlock alone"): under
    # QK_SANDBOX_OVERLAY=0 it may diverge from the plain run, but only with a refusal named for it.
    landlock_limit: str | None = None
    # What the overlay's read mask shows differently, by construction (docs/sandbox.md, "Limits"): a
    # refused file stands there with mode 000 and an owner the task's namespace does not map. Only a
    # shape that looks at exactly that carries it; under the overlay it may then diverge.
    overlay_limit: str | None = None

    @property
    def dir(self) -> str:
        return self.root or f"p/{self.name}"

    @property
    def task(self) -> str:
        return f"{self.name}:{TARGET}"

    def compared(self) -> list[str]:
        """Workspace-relative paths whose trees every mode must leave as the plain run does: the declared
        outputs and warm paths."""
        return [f"{self.dir}/{p}" for p in self.outputs + self.warm]

    def target(self) -> dict:
        t = {"command": self.command, "options": {"cwd": "{projectRoot}"}, "inputs": self.inputs,
             "outputs": ["{projectRoot}/" + o for o in self.outputs], "cache": False}
        if self.warm:
            t["qk:warm"] = ["{projectRoot}/" + w for w in self.warm]
        if self.ignore_reads:
            t["qk:ultracache"] = {"ignoreReads": self.ignore_reads}
        return t

    def describe(self) -> str:
        lines = [f"{self.task}: {self.about}", f"  in {self.dir}: {self.command}",
                 f"  inputs {json.dumps(self.inputs)}, outputs {json.dumps(self.outputs)}"]
        if self.warm:
            lines.append(f"  qk:warm {json.dumps(self.warm)}")
        if self.ignore_reads:
            lines.append(f"  ignoreReads {json.dumps(self.ignore_reads)}")
        if self.landlock_limit:
            lines.append(f"  Landlock alone: {self.landlock_limit}")
        if self.overlay_limit:
            lines.append(f"  overlay: {self.overlay_limit}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# The workspace

ROOT_FILES = {
    ".toolrc": "root-config\n",            # found by config discovery up the tree; nobody declares it
    ".declaredrc": "declared-config\n",    # the same, declared by the task looking for it
    ".env": "MODE=dotenv\n",               # dotenv: readable under enforce, listed as unkeyed by the audit
    "shared/conf.real.json": json.dumps({"name": "shared-conf", "other": 1}) + "\n",
    "shared/notes.txt": "shared notes\n",
    "node_modules/shared-lib/package.json": json.dumps({"name": "shared-lib", "main": "index.js"}) + "\n",
    "node_modules/shared-lib/index.js": "module.exports = 'from shared-lib';\n",
}
# The root package.json: "type": "module" for a project without a package.json of its own, whose .js files
# node runs as modules only if it reads this file.
ROOT_PACKAGE = {"name": "root", "private": True, "type": "module"}
NX_JSON = {"namedInputs": {"default": ["{projectRoot}/**/*"]}}


def _put(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(value, Link):
        path.symlink_to(value.target)
    elif isinstance(value, Mode):
        path.write_text(value.text)
        path.chmod(value.mode)
    else:
        path.write_text(value)


def write_workspace(root: Path, shapes: list[Shape], root_files: dict | None = None) -> Path:
    """The corpus as one workspace: nx.json, a root package.json, pnpm-workspace.yaml, a project per shape."""
    names = [s.name for s in shapes]
    assert len(set(names)) == len(names), "two shapes share a name"
    root.mkdir(parents=True)
    _put(root / "nx.json", json.dumps(NX_JSON, indent=2))
    _put(root / "package.json", json.dumps(ROOT_PACKAGE))
    globs = sorted({str(Path(s.dir).parent) + "/*" for s in shapes})
    _put(root / "pnpm-workspace.yaml", "packages:\n" + "".join(f"  - '{g}'\n" for g in globs))
    for rel, value in {**ROOT_FILES, **(root_files or {})}.items():
        _put(root / rel, value)
    for s in shapes:
        base = root / s.dir
        _put(base / "project.json", json.dumps({"name": s.name, "targets": {TARGET: s.target()}}, indent=2))
        if s.package_json:
            manifest = {"name": s.name}
            if s.depends:
                manifest["dependencies"] = {d: "workspace:*" for d in s.depends}
            _put(base / "package.json", json.dumps(manifest))
        for rel, value in {**BASE_FILES, **s.files}.items():
            if value is not None:
                _put(base / rel, value)
    return root


# ---------------------------------------------------------------------------------------------------------
# What a run leaves

def tree(ws: Path, rel: str) -> dict[str, tuple]:
    """The entry at rel and, for a directory, everything beneath it (links not followed): kind, mode bits,
    and content or link text. An entry that is not there is ("absent",)."""
    out: dict[str, tuple] = {}

    def entry(path: str, name: str) -> bool:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            out[name] = ("absent",)
            return False
        if stat.S_ISLNK(st.st_mode):
            out[name] = ("link", os.readlink(path))
            return False
        if stat.S_ISDIR(st.st_mode):
            out[name] = ("dir", stat.S_IMODE(st.st_mode))
            return True
        if not stat.S_ISREG(st.st_mode):
            out[name] = ("special", stat.S_IFMT(st.st_mode))
            return False
        try:
            with open(path, "rb") as f:
                out[name] = ("file", stat.S_IMODE(st.st_mode), f.read())
        except OSError as e:
            out[name] = ("unreadable", stat.S_IMODE(st.st_mode), e.strerror)
        return False

    top = os.path.join(ws, rel)
    if entry(top, rel):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for n in sorted(dirnames + filenames):
                path = os.path.join(dirpath, n)
                if not entry(path, os.path.relpath(path, ws)):
                    if n in dirnames:
                        dirnames.remove(n)  # a link to a directory: not walked
    return out


def trees(ws: Path, shape: Shape) -> dict[str, tuple]:
    out = {}
    for rel in shape.compared():
        out.update(tree(ws, rel))
    return out


def show(value: tuple | None) -> str:
    """One entry as a line of a report: a tar archive by its members, text by its start."""
    if value is None or value[0] == "absent":
        return "absent"
    kind = value[0]
    if kind == "link":
        return f"link -> {value[1]}"
    if kind == "dir":
        return f"dir {value[1]:o}"
    if kind == "special":
        return f"special file (type {value[1]:o})"
    if kind == "unreadable":
        return f"file {value[1]:o}, unreadable: {value[2]}"
    mode, data = value[1], value[2]
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            members = ", ".join(f"{m.name}{'/' if m.isdir() else ''}" for m in t.getmembers())
        return f"file {mode:o}, a tar of {len(data)} bytes: {members}"
    except tarfile.TarError:
        pass
    text = data[:160].decode("utf-8", "backslashreplace")
    return f"file {mode:o}, {len(data)} bytes: {text!r}{'…' if len(data) > 160 else ''}"


def tree_diff(expected: dict[str, tuple], actual: dict[str, tuple], label: str) -> list[str]:
    lines = []
    for path in sorted(set(expected) | set(actual)):
        a, b = expected.get(path), actual.get(path)
        if a != b:
            lines.append(f"{path}:\n        plain: {show(a)}\n        {label}: {show(b)}")
    return lines


# ---------------------------------------------------------------------------------------------------------
# The corpus

TAR = "tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner"
MK = "mkdir -p out && "
ANY_BUT_MD = ["{projectRoot}/**/*", "!{projectRoot}/**/*.md"]
BESIDE = "builds beside its output and renames into place: Landlock alone refuses what it makes beside it as it does"
MADE_OUTPUT = ("copies into its output, which is not there: Landlock alone makes it as the task starts, so the copy "
               "lands inside it, and the run says the result is not cached")
STAND_IN = ("looks at a refused file's mode or owner (or its right to read it): the read mask's stand-in shows mode 000 "
            "and an unmapped owner")

# A packer: every file under the project (but out) read into one bundle, as npm pack or publint list and read.
PACK_JS = """const fs = require('fs'), path = require('path');
const tolerant = process.argv[2] === 'tolerant';
const files = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(d, e.name);
    if (e.name === 'out') continue;
    if (e.isDirectory()) walk(p); else files.push(p);
  }
})('.');
const bundle = [];
for (const f of files) {
  try { bundle.push([f, fs.readFileSync(f, 'utf8')]); }
  catch (e) { if (!tolerant) throw e; bundle.push([f, 'skipped']); }
}
fs.mkdirSync('out', { recursive: true });
fs.writeFileSync('out/bundle.json', JSON.stringify(bundle, null, 1));
"""

# read-pkg-up: the nearest package.json from the working directory up, by hand, as many tools look for it.
PKG_UP_JS = """const fs = require('fs'), path = require('path');
let d = process.cwd(), found = 'none';
for (let n = 0; n < 8; n++) {
  const f = path.join(d, 'package.json');
  if (fs.existsSync(f)) { found = n + ' ' + JSON.parse(fs.readFileSync(f, 'utf8')).name; break; }
  const up = path.dirname(d); if (up === d) break; d = up;
}
fs.mkdirSync('out', { recursive: true });
fs.writeFileSync('out/pkg', found + '\\n');
"""

ESM_JS = """import fs from 'node:fs';
fs.mkdirSync('out', { recursive: true });
fs.writeFileSync('out/m', 'ran as a module\\n');
"""

REQUIRE_JS = """const fs = require('fs');
fs.mkdirSync('out', { recursive: true });
fs.writeFileSync('out/r', require('shared-lib') + '\\n');
"""

EXISTS_JS = """const fs = require('fs');
const seen = ['README.md', 'docs', 'nothere.txt'].map(f => f + ' ' + fs.existsSync(f)).join('\\n');
fs.mkdirSync('out', { recursive: true });
fs.writeFileSync('out/exists', seen + '\\n');
"""

CONFIG_JS = """const fs = require('fs');
const config = fs.existsSync('tool.config.json') ? JSON.parse(fs.readFileSync('tool.config.json', 'utf8')) : { mode: 'default' };
fs.mkdirSync('out', { recursive: true });
fs.writeFileSync('out/mode', config.mode + '\\n');
"""

CONFIG_TRY_JS = """const fs = require('fs');
let config = { mode: 'default' };
try { config = JSON.parse(fs.readFileSync('tool.config.json', 'utf8')); } catch (e) {}
fs.mkdirSync('out', { recursive: true });
fs.writeFileSync('out/mode', config.mode + '\\n');
"""

RENAME_DIR_JS = """const fs = require('fs');
fs.mkdirSync('out.tmp');
fs.writeFileSync('out.tmp/a.txt', fs.readFileSync('src/a.txt'));
fs.renameSync('out.tmp', 'out');
"""

RENAME_FILE_JS = """const fs = require('fs');
fs.writeFileSync('result.json.tmp', JSON.stringify({ a: fs.readFileSync('src/a.txt', 'utf8') }));
fs.renameSync('result.json.tmp', 'result.json');
"""

JSON_FIELD_JS = """const fs = require('fs');
const c = JSON.parse(fs.readFileSync('conf.json', 'utf8'));
fs.mkdirSync('out', { recursive: true });
fs.writeFileSync('out/name', c.name + '\\n');
"""

TOOL_CONFIG_MJS = "console.log('config says ' + (1 + 1));\n"

# Config discovery up the tree: the first directory from here up holding the file, and what it says.
def walk_up(name: str, test: str = "-f") -> str:
    return (f"d=.; n=0; found=none; while [ $n -lt 6 ]; do if [ {test} $d/{name} ]; then "
            f"found=\"$n $(cat $d/{name})\"; break; fi; d=$d/..; n=$((n+1)); done; "
            f"mkdir -p out && echo \"$found\" > out/cfg")


def corpus() -> list[Shape]:
    S = Shape
    return [
        # Listers and packers
        S("tar-project", "packs its project directory; README.md is beside the inputs, not among them",
          MK + TAR + " --exclude=./out -cf out/pkg.tar .", inputs=ANY_BUT_MD),
        S("tar-src", "packs its declared sources only", MK + TAR + " -cf out/src.tar src"),
        S("ls-project", "lists its project directory, README.md included", MK + "ls -1A . > out/list"),
        S("find-list", "finds every file of its project by name",
          MK + "find . -name out -prune -o -print | sort > out/files"),
        S("find-cat", "finds the .txt and .md files and reads them all",
          MK + "find . -name out -prune -o -type f \\( -name '*.txt' -o -name '*.md' \\) -print | sort"
               " | xargs cat > out/all"),
        S("pack-node", "node lists its project and reads every file into a bundle (npm pack)",
          "node src/pack.cjs", files={"src/pack.cjs": PACK_JS}, inputs=ANY_BUT_MD),
        S("pack-tolerant", "node packs what it can read and skips what it cannot (publint)",
          "node src/pack.cjs tolerant", files={"src/pack.cjs": PACK_JS}, inputs=ANY_BUT_MD),
        # Config discovery up the tree
        S("cfg-up", "looks for .toolrc in each directory up the tree ([ -f ]), finds the workspace root's",
          walk_up(".toolrc")),
        S("cfg-up-r", "looks for a readable .toolrc up the tree ([ -r ])", walk_up(".toolrc", "-r")),
        S("cfg-up-declared", "looks for .declaredrc up the tree, which it declares",
          walk_up(".declaredrc"), inputs=DEFAULT_INPUTS + ["{workspaceRoot}/.declaredrc"]),
        S("cfg-up-missing", "looks for a file no directory holds, up past the workspace", walk_up(".nowhererc")),
        S("node-pkg-up", "a project without package.json: node looks for the nearest one up the tree",
          "node src/pkgup.cjs", files={"src/pkgup.cjs": PKG_UP_JS}, package_json=False),
        S("node-type-up", "a project without package.json: node runs a .js file as a module because the "
                          "root package.json says \"type\": \"module\"",
          "node src/main.js", files={"src/main.js": ESM_JS}, package_json=False),
        S("node-require-up", "node resolves a package from the root's node_modules",
          "node src/req.cjs", files={"src/req.cjs": REQUIRE_JS}),
        # Fallbacks
        S("fallback-cat", "cat README.md, or a fallback when it cannot",
          MK + "(cat README.md 2>/dev/null || echo fallback) > out/r"),
        S("fallback-missing", "cat of a file that does not exist, then a fallback",
          MK + "(cat nothere.txt 2>/dev/null || echo fallback) > out/r"),
        S("fallback-other-project", "reads another project's file, or a fallback",
          MK + "(cat ../ctrl-plain/src/a.txt 2>/dev/null || echo fallback) > out/r"),
        S("fallback-node", "node reads its config in a try, a default when it cannot",
          "node src/config.cjs", files={"src/config.cjs": CONFIG_TRY_JS, "tool.config.json": '{"mode": "custom"}'}),
        # Existence checks
        S("test-e", "[ -e README.md ]", MK + "{ [ -e README.md ] && echo yes || echo no; } > out/e"),
        S("test-r", "[ -r README.md ]", MK + "{ [ -r README.md ] && echo yes || echo no; } > out/r",
          overlay_limit=STAND_IN),
        S("test-f-d", "[ -f README.md ] and [ -d docs ] on undeclared files",
          MK + "{ [ -f README.md ] && echo f1 || echo f0; [ -d docs ] && echo d1 || echo d0; "
               "[ -s docs/guide.md ] && echo s1 || echo s0; } > out/fd",
          files={"docs/guide.md": "guide\n"}),
        S("node-exists", "node fs.existsSync on undeclared files and directories",
          "node src/exists.cjs", files={"src/exists.cjs": EXISTS_JS, "docs/guide.md": "guide\n"}),
        S("node-exists-read", "node reads its config when fs.existsSync finds it (undeclared)",
          "node src/config.cjs", files={"src/config.cjs": CONFIG_JS, "tool.config.json": '{"mode": "custom"}'}),
        S("stat-size-mtime", "stat's size, mtime and type of an undeclared and a declared file",
          MK + "stat -c '%n %s %Y %F' README.md src/a.txt > out/st"),
        S("stat-mode", "stat's mode bits of an undeclared and a declared file",
          MK + "stat -c '%n %a' README.md src/a.txt > out/mode", overlay_limit=STAND_IN),
        S("stat-owner", "stat's owner and group of an undeclared and a declared file",
          MK + "stat -c '%n %u %g' README.md src/a.txt > out/owner", overlay_limit=STAND_IN),
        # Renames into outputs
        S("mv-tmp-out", "mkdir out.tmp, fills it, mv out.tmp out (out not there)",
          "mkdir out.tmp && cp src/a.txt out.tmp/ && mv out.tmp out", landlock_limit=BESIDE),
        S("mv-tmp-out-replace", "rm -rf out (there, stale), then mv out.tmp out",
          "mkdir out.tmp && cp src/a.txt out.tmp/ && rm -rf out && mv out.tmp out",
          files={"out/stale.txt": "stale\n"},
          landlock_limit=BESIDE + ", and it removes its output directory"),
        S("cp-r-src-out", "cp -r src out, out not there (a copy named out)", "cp -r src out",
          landlock_limit=MADE_OUTPUT),
        S("cp-r-src-out-existing", "cp -r src out, out there (a copy inside out)", "cp -r src out",
          files={"out/.keep": ""}),
        S("node-rename-dir", "node fs.renameSync('out.tmp', 'out'), out not there",
          "node src/rename.cjs", files={"src/rename.cjs": RENAME_DIR_JS}, landlock_limit=BESIDE),
        S("node-rename-file", "node writes result.json.tmp and renames it to its file output result.json",
          "node src/rename.cjs", files={"src/rename.cjs": RENAME_FILE_JS}, outputs=["result.json"],
          landlock_limit=BESIDE + ", and its file output was not there"),
        S("mv-file-over-output", "writes out.txt.tmp and mv's it over its file output out.txt (there)",
          "cat src/a.txt src/b.txt > out.txt.tmp && mv out.txt.tmp out.txt",
          files={"out.txt": "old\n"}, outputs=["out.txt"], landlock_limit=BESIDE),
        S("file-output-new", "writes its file output result.txt, not there before",
          "cat src/a.txt > result.txt", outputs=["result.txt"],
          landlock_limit="a file output that was not there cannot be created"),
        S("file-output-existing", "rewrites its file output result.txt", "cat src/b.txt > result.txt",
          files={"result.txt": "old\n"}, outputs=["result.txt"]),
        S("chmod-output", "sets mode bits on what it writes in its output",
          MK + "cp src/a.txt out/x && chmod 751 out/x && mkdir out/d && chmod 700 out/d && "
               "echo y > out/y && chmod 600 out/y"),
        # Optional outputs
        S("optional-dir", "declares out and extra, writes only out", MK + "cp src/a.txt out/",
          outputs=["out", "extra"]),
        S("optional-file", "declares out and report.json, writes only out", MK + "cp src/a.txt out/",
          outputs=["out", "report.json"]),
        S("optional-nested", "declares build/lib (build not there) and out, writes only out",
          MK + "cp src/a.txt out/", outputs=["out", "build/lib"]),
        # Links in inputs and outputs
        S("input-link-inside", "reads an input that is a link to another input",
          MK + "cat src/link.txt > out/l", files={"src/link.txt": Link("a.txt")}),
        S("input-link-out", "reads an input that is a link to an undeclared file of its project",
          MK + "cat src/link.txt > out/l", files={"src/link.txt": Link("../notes/n.txt"), "notes/n.txt": "note\n"}),
        S("input-dir-link", "reads through an input that is a link to a directory outside its inputs",
          MK + "cat src/lib/v.txt > out/v", files={"src/lib": Link("../vendor"), "vendor/v.txt": "vendored\n"}),
        S("json-input-link", "a json input whose file is a link to a shared file; node reads the field",
          "node src/field.cjs", files={"src/field.cjs": JSON_FIELD_JS, "conf.json": Link("../../shared/conf.real.json")},
          inputs=DEFAULT_INPUTS + [{"json": "{projectRoot}/conf.json", "fields": ["name"]}]),
        S("json-input-plain", "a json input (a plain file); node reads the field",
          "node src/field.cjs", files={"src/field.cjs": JSON_FIELD_JS, "conf.json": '{"name": "own-conf", "x": 2}'},
          inputs=DEFAULT_INPUTS + [{"json": "{projectRoot}/conf.json", "fields": ["name"]}]),
        S("output-links", "writes links in its output (to an input, dangling, to a directory)",
          MK + "ln -s ../src/a.txt out/to-a && ln -s nowhere out/dangling && ln -s ../src out/to-src"),
        S("output-file-link", "its file output is a link it makes", "ln -s src/a.txt linked.txt",
          outputs=["linked.txt"], landlock_limit="a file output that was not there cannot be created"),
        # Nested projects
        S("nest-a", "a project holding another: reads every .txt file under it",
          MK + "find . -name out -prune -o -type f -name '*.txt' -print | sort | xargs cat > out/all"),
        S("nest-a-inner", "the project nested in nest-a", MK + "cat src/a.txt > out/x", root="p/nest-a/inner",
          files={"src/a.txt": "inner alpha\n"}),
        S("nest-b", "a project holding another: lists every file under it",
          MK + "find . -name out -prune -o -print | sort > out/files"),
        S("nest-b-inner", "the project nested in nest-b", MK + "cat src/a.txt > out/x", root="p/nest-b/inner"),
        S("dep-lib", "a library other shapes depend on", MK + "cat src/a.txt > out/x"),
        S("dep-lib-nested", "a project nested in dep-lib", MK + "cat src/a.txt > out/x", root="p/dep-lib/nested",
          files={"src/a.txt": "nested in the library\n"}),
        S("dep-ignore", "depends on dep-lib, ignoreReads ^**; reads dep-lib's file and one of the project "
                        "nested in it (not dep-lib's, so not ignored)",
          MK + "cat ../dep-lib/src/a.txt ../dep-lib/nested/src/a.txt > out/x",
          depends=["dep-lib"], ignore_reads=["^**"]),
        S("read-dependency", "reads a file of the project it depends on, without a ^ input",
          MK + "cat ../dep-lib/src/a.txt > out/x", depends=["dep-lib"]),
        S("read-dependency-declared", "reads a file of the project it depends on, with a ^ input",
          MK + "cat ../dep-lib/src/a.txt > out/x", depends=["dep-lib"],
          inputs=DEFAULT_INPUTS + ["^{projectRoot}/src/**/*"]),
        # Warm paths
        S("warm-count", "appends to its warm state and writes how many runs it counts",
          "echo run >> .warm/count && " + MK + "wc -l < .warm/count > out/n",
          files={".warm/count": "run\nrun\n"}, warm=[".warm"]),
        S("warm-missing", "makes its warm directory, not there yet, and reads it back",
          "mkdir -p .warm && echo state >> .warm/s && " + MK + "cp .warm/s out/s", warm=[".warm"]),
        # Tools that make files and read them back
        S("temp-beside-config", "copies its config to a timestamped file beside it, runs it, removes it (vite)",
          MK + "cp tool.config.mjs tool.config.mjs.timestamp-1.mjs && node tool.config.mjs.timestamp-1.mjs > out/c"
               " && rm tool.config.mjs.timestamp-1.mjs",
          files={"tool.config.mjs": TOOL_CONFIG_MJS}, inputs=DEFAULT_INPUTS + ["{projectRoot}/tool.config.mjs"],
          landlock_limit="a temporary file beside its config is refused as it is made"),
        S("readback-in-output", "makes out/.tmp again, writes in it, reads it back (vitest's coverage/.tmp)",
          "rm -rf out/.tmp && mkdir -p out/.tmp && echo 1 > out/.tmp/c.json && cat out/.tmp/c.json > out/sum"
          " && rm -rf out/.tmp", files={"out/.tmp/old.json": "old\n"}),
        S("readback-output-remade", "rm -rf out, mkdir out, writes in it and reads back",
          "rm -rf out && mkdir out && echo 1 > out/c && cat out/c > out/sum", files={"out/stale": "stale\n"},
          landlock_limit="it removes its output directory"),
        S("readback-undeclared", "rm -rf cache (undeclared), makes it again, writes and reads back",
          "rm -rf cache && mkdir cache && echo v > cache/v && " + MK + "cat cache/v > out/v",
          files={"cache/old": "old\n"}),
        # make
        S("make-readme", "make with a prerequisite outside its inputs (README.md)",
          "make -s out/r.txt", files={"Makefile": "out/r.txt: src/a.txt README.md\n"
                                      "\tmkdir -p out && cat $^ > $@\n"},
          inputs=DEFAULT_INPUTS + ["{projectRoot}/Makefile"]),
        S("make-declared", "make with declared prerequisites only",
          "make -s out/r.txt", files={"Makefile": "out/r.txt: src/a.txt src/b.txt\n\tmkdir -p out && cat $^ > $@\n"},
          inputs=DEFAULT_INPUTS + ["{projectRoot}/Makefile"]),
        # Reading undeclared, writing outside, other projects
        S("read-undeclared", "reads README.md, outside its inputs", MK + "cat README.md src/a.txt > out/x"),
        S("read-shared", "reads a file of the workspace outside every project", MK + "cat ../../shared/notes.txt > out/x"),
        S("write-stray", "writes a file beside its output", MK + "echo x > out/x && echo stray > stray.txt"),
        S("write-stray-root", "writes a file at the workspace root", MK + "echo x > out/x && echo s > ../../stray-root.txt"),
        S("read-other-project", "reads another project's file", MK + "cat ../ctrl-plain/src/a.txt > out/x"),
        S("dotenv-read", "reads the workspace's .env, which the sandbox allows", MK + "cat ../../.env > out/env"),
        # Exit codes
        S("fail-on-purpose", "writes part of its output and exits 3", MK + "echo partial > out/p && exit 3"),
        S("fail-after-undeclared", "reads README.md into its output, then exits 1",
          MK + "cat README.md > out/r; exit 1"),
        S("fail-false", "false, writing nothing", "false"),
        # Controls
        S("ctrl-plain", "copies its inputs to its output", MK + "cp src/a.txt src/b.txt out/"),
    ]


# ---------------------------------------------------------------------------------------------------------
# Random shapes: a grammar of commands over one project (src/ declared, README.md and notes/ not, out the
# output), joined with &&, so that the order of what a task does varies as it does in real tools.

LIMIT_BESIDE = "builds its output beside it (out.tmp) and renames it into place"


def random_shape(rng: random.Random, name: str, other: str) -> Shape:
    """One shape: a way to build the output (in place, beside it and renamed, a node rename, a copy of src
    taken for it), a few operations writing into it, and perhaps an exit status of its own."""
    files = {"notes/n.txt": "note\n"}
    preexisting = rng.random() < 0.3
    if preexisting:
        files["out/stale.txt"] = "stale\n"
    style = rng.choice(["direct", "direct", "beside", "beside-rm", "node-rename", "copy"])
    limit = None
    overlay_limit = None
    if style == "direct":
        head, d = ["mkdir -p out"], "out"
    elif style == "copy":
        head, d = ["cp -r src out", "mkdir -p out/log.d"], "out/log.d"
        if not preexisting:
            limit = MADE_OUTPUT
    else:
        head, d = ["rm -rf out.tmp", "mkdir out.tmp"], "out.tmp"
        limit = LIMIT_BESIDE
    log = f"{d}/log"
    ops = []
    pick = ["read-declared", "read-undeclared", "read-undeclared-tolerant", "probe-e", "probe-r", "probe-f",
            "probe-node", "list-project", "list-src", "find", "write-output", "write-stray", "link",
            "stat", "read-other", "temp-readback", "tar", "cp-r"]
    for _ in range(rng.randint(2, 5)):
        op = rng.choice(pick)
        k = len(ops)
        if op == "read-declared":
            ops.append(f"cat src/{rng.choice(['a', 'b'])}.txt >> {log}")
        elif op == "read-undeclared":
            ops.append(f"cat {rng.choice(['README.md', 'notes/n.txt'])} >> {log}")
        elif op == "read-undeclared-tolerant":
            ops.append(f"{{ cat {rng.choice(['README.md', 'notes/n.txt'])} 2>/dev/null || echo fallback; }} >> {log}")
        elif op in ("probe-e", "probe-r", "probe-f"):
            flag = op[-1]
            f = rng.choice(["README.md", "notes/n.txt", "notes", "nothere"])
            ops.append(f"{{ [ -{flag} {f} ] && echo {flag}1 || echo {flag}0; }} >> {log}")
            if flag == "r" and f in ("README.md", "notes/n.txt"):
                overlay_limit = STAND_IN
        elif op == "probe-node":
            f = rng.choice(["README.md", "notes/n.txt", "nothere"])
            ops.append(f"node -e \"process.stdout.write(String(require('fs').existsSync('{f}')))\" >> {log}")
        elif op == "list-project":
            ops.append(f"ls -1A . >> {log}")
        elif op == "list-src":
            ops.append(f"ls -1A src >> {log}")
        elif op == "find":
            ops.append(f"find . -name 'out*' -prune -o -print | sort >> {log}")
        elif op == "write-output":
            ops.append(f"echo w{k} > {d}/w{k}.txt")
        elif op == "write-stray":
            ops.append(f"echo s{k} > stray{k}.txt")
        elif op == "link":
            ops.append(f"ln -sf ../src/a.txt {d}/link{k}")
        elif op == "stat":
            ops.append(f"stat -c '%n %s %Y %F' {rng.choice(['README.md', 'src/a.txt', 'notes/n.txt'])} >> {log}")
        elif op == "read-other":
            ops.append(f"cat ../{other}/src/a.txt >> {log}")
        elif op == "temp-readback":
            ops.append(f"echo t{k} > tmp{k}.txt && cat tmp{k}.txt >> {log} && rm tmp{k}.txt")
            limit = limit or "a temporary file beside its inputs is refused as it is made"
        elif op == "tar":
            ops.append(f"{TAR} --exclude='./out*' -cf {d}/p{k}.tar .")
        elif op == "cp-r":
            ops.append(f"cp -r src {d}/copy{k}")
    tail = []
    if style == "beside":
        tail = ["mv out.tmp out"]
    elif style == "beside-rm":
        tail = ["rm -rf out", "mv out.tmp out"]
        limit = LIMIT_BESIDE + ", removing its output directory"
    elif style == "node-rename":
        tail = ["rm -rf out", "node -e \"require('fs').renameSync('out.tmp', 'out')\""]
        limit = LIMIT_BESIDE + ", removing its output directory"
    if rng.random() < 0.15:
        tail.append(f"exit {rng.choice([1, 2, 3])}")
    command = " && ".join(head + ops + tail)
    return Shape(name, f"random ({style}{', out there' if preexisting else ''})", command, files=files,
                 landlock_limit=limit, overlay_limit=overlay_limit)


def random_corpus(seed: int, n: int) -> list[Shape]:
    rng = random.Random(seed)
    other = "rnd-other"
    shapes = [random_shape(rng, f"rnd-{i:02d}", other) for i in range(n)]
    shapes.append(Shape(other, "a project the random shapes may read from", MK + "cp src/a.txt out/"))
    return shapes
