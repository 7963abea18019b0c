"""A real pnpm install (pnpm 9, and pnpm 10 whose .pnpm names differ) of a small workspace, from the npm
registry: qk's lockfile parser must read the importers, packages and closures that `pnpm list --json -r`
reports, and name the node_modules/.pnpm directories pnpm made.

The workspace has two packages and a nested one, with: a root-only dev dependency, an npm: alias, a peer
dependency (a suffixed snapshot key), an upper-case name (a hashed directory), a workspace: link, a nested
workspace importer linking back up, and an optional dependency."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

import pytest

import pnpm_install as pi

WORKSPACE = {
    "package.json": {"name": "root", "private": True, "devDependencies": {"is-number": "^7.0.0"}},
    "pnpm-workspace.yaml": "packages:\n  - packages/*\n  - packages/a/e2e\n",
    "packages/a/package.json": {
        "name": "a",
        "version": "1.0.0",
        "dependencies": {
            "b": "workspace:*",
            "alias-odd": "npm:is-odd@3.0.1",
            "react": "18.2.0",
            "react-dom": "18.2.0",
            "JSONStream": "1.3.5",
        },
        "optionalDependencies": {"ms": "2.1.3"},
    },
    "packages/b/package.json": {"name": "b", "version": "1.0.0", "dependencies": {"ms": "^2.1.3"}},
    "packages/a/e2e/package.json": {
        "name": "a-e2e",
        "version": "1.0.0",
        "private": True,
        "devDependencies": {"a": "workspace:*", "is-odd": "^3.0.1"},
    },
}

KINDS = ("dependencies", "devDependencies", "optionalDependencies")


class Install:
    def __init__(self, root: Path, major: int):
        self.root = root
        self.major = major
        self.listing = {self.importer_of(p["path"]): p for p in pi.list_json(root, major)}
        self.dump = pi.dump(root / "pnpm-lock.yaml", root / "node_modules" / ".modules.yaml")

    def importer_of(self, path: str) -> str:
        rel = os.path.relpath(os.path.realpath(path), self.root)
        return "." if rel == "." else rel.replace(os.sep, "/")

    def store_dir_of(self, path: str) -> str:
        """<root>/node_modules/.pnpm/<dir>/node_modules/<name> -> <dir>."""
        parts = Path(path).relative_to(self.root / "node_modules" / ".pnpm").parts
        assert parts[1] == "node_modules", path
        return parts[0]

    def snapshot(self, key: str) -> dict:
        return self.dump["snapshots"][key]


@pytest.fixture(scope="module", params=[9, 10], ids=["pnpm9", "pnpm10"])
def installed(request, tmp_path_factory) -> Install:
    root = Path(os.path.realpath(tmp_path_factory.mktemp(f"pnpm{request.param}-"))) / "ws"
    root.mkdir()
    pi.write_workspace(root, WORKSPACE)
    pi.install(root, request.param)
    return Install(root, request.param)


def full_entries(inst: Install) -> dict:
    """path -> an occurrence of that entry with its dependencies: pnpm 10's list writes a subtree once and
    marks later occurrences `deduped`."""
    full: dict = {}

    def visit(entries):
        for entry in (entries or {}).values():
            if not entry.get("deduped") and entry["path"] not in full:
                full[entry["path"]] = entry
            for kind in KINDS:
                visit(entry.get(kind))

    for project in inst.listing.values():
        for kind in KINDS:
            visit(project.get(kind))
    return full


def walk(inst: Install, entries: dict, follow_links: bool, seen: set | None = None):
    """(alias, entry) of a `pnpm list` tree, depth first, deduped subtrees expanded; into link: entries only
    if follow_links."""
    full = full_entries(inst)
    seen = set() if seen is None else seen

    def go(entries):
        for alias, entry in (entries or {}).items():
            yield alias, entry
            if entry["version"].startswith("link:") and not follow_links:
                continue
            if entry["path"] in seen:
                continue
            seen.add(entry["path"])
            whole = full.get(entry["path"], entry) if entry.get("deduped") else entry
            for kind in KINDS:
                yield from go(whole.get(kind))

    yield from go(entries)


def tree_dirs(inst: Install, importer: str, follow_links: bool) -> set:
    project = inst.listing[importer]
    dirs = set()
    for kind in KINDS:
        for _, entry in walk(inst, project.get(kind), follow_links):
            if not entry["version"].startswith("link:"):
                dirs.add(inst.store_dir_of(entry["path"]))
    return dirs


def test_layout_is_read_from_modules_yaml(installed):
    assert installed.dump["layout"] == {"pnpmMajor": installed.major, "maxLength": 120, "nodeLinker": "isolated"}
    assert installed.dump["lockfileVersion"] == "9.0"


def test_the_workspace_has_every_shape(installed):
    a = installed.dump["importers"]["packages/a"]["dependencies"]
    assert a["alias-odd"]["snapshot"] == "is-odd@3.0.1"
    assert a["react-dom"]["snapshot"] == "react-dom@18.2.0(react@18.2.0)"
    assert a["b"]["link"] == "packages/b"
    assert installed.dump["importers"]["packages/a/e2e"]["devDependencies"]["a"]["link"] == "packages/a"
    expected_hash = {9: "r3os6ifnv5rfzwtsmjig3b325i", 10: "fb8f73c374dcf7070ffed90b688edabd"}[installed.major]
    assert installed.snapshot("JSONStream@1.3.5")["dir"] == f"JSONStream@1.3.5_{expected_hash}"
    assert "ms" in installed.dump["importers"]["packages/a"]["optionalDependencies"]


def test_importers_are_the_projects_pnpm_lists(installed):
    assert set(installed.dump["importers"]) == set(installed.listing)
    assert set(installed.listing) == {".", "packages/a", "packages/a/e2e", "packages/b"}


def test_direct_dependencies_match_pnpm_list(installed):
    for importer, project in installed.listing.items():
        ours = installed.dump["importers"][importer]
        for kind in KINDS:
            listed = project.get(kind) or {}
            assert set(ours[kind]) == set(listed), (importer, kind)
            for alias, entry in listed.items():
                dep = ours[kind][alias]
                if entry["version"].startswith("link:"):
                    assert dep["version"] == entry["version"]
                    assert dep["snapshot"] is None
                    assert dep["link"] == installed.importer_of(entry["path"])
                    assert dep["link"] == posixpath.normpath(posixpath.join(importer, entry["version"][5:]))
                else:
                    snap = installed.snapshot(dep["snapshot"])
                    assert (snap["name"], snap["version"]) == (entry["from"], entry["version"]), (importer, alias)
                    assert snap["dir"] == installed.store_dir_of(entry["path"]), (importer, alias)


def test_packages_match_everything_pnpm_list_reaches(installed):
    listed = set()
    for project in installed.listing.values():
        for kind in KINDS:
            for _, entry in walk(installed, project.get(kind), follow_links=True):
                if not entry["version"].startswith("link:"):
                    listed.add((entry["from"], entry["version"], installed.store_dir_of(entry["path"])))
    ours = {(s["name"], s["version"], s["dir"]) for s in installed.dump["snapshots"].values()}
    assert ours == listed
    assert set(installed.dump["packages"]) == {s["package"] for s in installed.dump["snapshots"].values()}


def test_closures_match_the_trees_pnpm_lists(installed):
    for importer in installed.listing:
        closure = installed.dump["closures"][importer]
        dirs = {installed.snapshot(k)["dir"] for k in closure["snapshots"]}
        assert dirs == tree_dirs(installed, importer, follow_links=False), importer
        dirs = {installed.snapshot(k)["dir"] for k in closure["withLinks"]}
        assert dirs == tree_dirs(installed, importer, follow_links=True), importer
    e2e = installed.dump["closures"]["packages/a/e2e"]
    assert e2e["links"] == ["packages/a"]
    assert e2e["importersWithLinks"] == ["packages/a", "packages/a/e2e", "packages/b"]


def test_every_store_directory_is_a_snapshot_and_back(installed):
    on_disk = set(os.listdir(installed.root / "node_modules" / ".pnpm")) - {"node_modules", "lock.yaml"}
    assert on_disk == {s["dir"] for s in installed.dump["snapshots"].values()}


def test_importer_links_point_at_the_snapshot_directories(installed):
    for importer, imp in installed.dump["importers"].items():
        for kind in KINDS:
            for alias, dep in imp[kind].items():
                link = installed.root / importer / "node_modules" / alias
                target = Path(os.path.realpath(link))
                if dep["link"] is not None:
                    assert target == installed.root / dep["link"]
                    continue
                snap = installed.snapshot(dep["snapshot"])
                store = installed.root / "node_modules" / ".pnpm" / snap["dir"] / "node_modules" / snap["name"]
                assert target == store, (importer, alias)
