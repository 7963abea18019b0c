"""qk affected, as CI scripts call Nx's: the projects a git change touches (a file inside a project), the
projects whose tasks key a changed root file (the lockfile, a shared config), and every project that
depends on one of those; from git (--base, --head, the working tree with untracked files) or --files."""

from __future__ import annotations

import json
import subprocess

from audit_workspace import make_workspace, qk, write


def git(ws, *args):
    subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(ws)})


def workspace(tmp_path):
    # app depends on lib; tool stands alone and keys the shared config tsconfig.base.json.
    build = lambda name: {"command": f"echo built-{name}", "cache": False}
    ws = make_workspace(tmp_path / "ws", {
        "lib": {"root": "packages/lib", "targets": {"build": build("lib")}},
        "app": {"root": "packages/app", "targets": {"build": build("app")}, "depends": ["lib"]},
        "tool": {"root": "packages/tool", "targets": {"build": {**build("tool"),
                 "inputs": ["{projectRoot}/**/*", "{workspaceRoot}/tsconfig.base.json"]}}},
    }, files={"packages/lib/src.ts": "1\n", "packages/app/src.ts": "1\n", "packages/tool/src.ts": "1\n",
              "tsconfig.base.json": "{}\n", "README.md": "hi\n"})
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "base")
    git(ws, "checkout", "-q", "-b", "feature")
    return ws


def ran(stdout):
    return {n for n in ("lib", "app", "tool") if f"built-{n}" in stdout}


def test_a_change_in_a_project_affects_it_and_its_dependents(tmp_path):
    ws = workspace(tmp_path)
    write(ws, "packages/lib/src.ts", "2\n")
    r = qk(ws, "affected", "-t", "build")  # the working tree against main
    assert r.returncode == 0, r.stdout + r.stderr
    assert "qk affected: 1 changed file; affected: app, lib" in r.stdout
    assert ran(r.stdout) == {"lib", "app"}


def test_committed_changes_between_base_and_head_and_untracked_files(tmp_path):
    ws = workspace(tmp_path)
    write(ws, "packages/tool/new.ts", "x\n")  # untracked: counted without --head
    r = qk(ws, "affected", "-t", "build", "--base", "main")
    assert ran(r.stdout) == {"tool"}, r.stdout
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "tool")
    r = qk(ws, "affected", "-t", "build", "--base", "main", "--head", "HEAD")
    assert ran(r.stdout) == {"tool"}, r.stdout
    r = qk(ws, "affected", "-t", "build", "--base", "HEAD", "--head", "HEAD")
    assert "affected: none" in r.stdout and "nothing to run" in r.stdout and ran(r.stdout) == set(), r.stdout


def test_a_root_file_affects_what_keys_it_and_nothing_else(tmp_path):
    ws = workspace(tmp_path)
    r = qk(ws, "affected", "-t", "build", "--files", "tsconfig.base.json")
    assert ran(r.stdout) == {"tool"}, r.stdout
    r = qk(ws, "affected", "-t", "build", "--files", "README.md")
    assert ran(r.stdout) == set(), r.stdout
    r = qk(ws, "affected", "-t", "build", "--files", "packages/lib/src.ts", "--exclude", "app")
    assert ran(r.stdout) == {"lib"}, r.stdout


def test_a_base_git_does_not_know_is_named(tmp_path):
    ws = workspace(tmp_path)
    r = qk(ws, "affected", "-t", "build", "--base", "nosuch")
    assert r.returncode != 0
    assert "`git merge-base nosuch HEAD` failed" in r.stderr, r.stderr


def test_what_git_says_on_stderr_is_no_changed_file(tmp_path):
    # A tag and a branch both named main: git warns "refname 'main' is ambiguous" on stderr, and must
    # still answer on stdout; the warning is neither a changed file nor part of the merge base.
    ws = workspace(tmp_path)
    git(ws, "tag", "main", "main")
    write(ws, "packages/lib/src.ts", "2\n")
    r = qk(ws, "affected", "-t", "build", "--base", "main")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "qk affected: 1 changed file; affected: app, lib" in r.stdout, r.stdout


def test_a_root_project_keying_the_whole_workspace_is_affected_by_a_change_anywhere(tmp_path):
    # As Nx lists it (its implicit locator matches {workspaceRoot} filesets against every changed file):
    # a root project whose inputs take {workspaceRoot}/**/* (a knip or a lint over the repository).
    build = lambda name: {"command": f"echo built-{name}", "cache": False}
    ws = make_workspace(tmp_path / "ws", {
        "root": {"root": ".", "targets": {"build": {**build("root"), "inputs": ["{workspaceRoot}/**/*"]}}},
        "rootish": {"root": "tools/rootish", "targets": {"build": build("rootish")}},
        "lib": {"root": "packages/lib", "targets": {"build": build("lib")}},
    }, files={"packages/lib/src.ts": "1\n", "tools/rootish/a.ts": "1\n"})
    r = qk(ws, "affected", "-t", "build", "--files", "packages/lib/src.ts")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "affected: lib, root" in r.stdout, r.stdout
    assert "built-root" in r.stdout and "built-lib" in r.stdout and "built-rootish" not in r.stdout
    # A negation in the same group leaves those files out, as in the key.
    ws2 = make_workspace(tmp_path / "ws2", {
        "root": {"root": ".", "targets": {"build": {
            **build("root"), "inputs": ["{workspaceRoot}/**/*", "!{workspaceRoot}/packages/**"]}}},
        "lib": {"root": "packages/lib", "targets": {"build": build("lib")}},
    }, files={"packages/lib/src.ts": "1\n"})
    r = qk(ws2, "affected", "-t", "build", "--files", "packages/lib/src.ts")
    assert "affected: lib\n" in r.stdout, r.stdout


def test_without_base_and_without_main_it_says_to_pass_base(tmp_path):
    ws = make_workspace(tmp_path / "ws", {"lib": {"root": "packages/lib", "targets": {"build": {"command": "true"}}}})
    git(ws, "init", "-q", "-b", "trunk")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "base")
    r = qk(ws, "affected", "-t", "build")
    assert r.returncode != 0
    assert ('no --base was given, and the default base "main" names no branch or commit in this repository '
            '(`git rev-parse --verify main^{commit}` found none); pass the branch or commit to compare against '
            'with --base (for example --base origin/main), or set nx.json\'s defaultBase') in r.stderr, r.stderr
    nx = json.loads((ws / "nx.json").read_text())
    (ws / "nx.json").write_text(json.dumps({**nx, "defaultBase": "develop"}))
    r = qk(ws, "affected", "-t", "build")
    assert 'nx.json\'s defaultBase "develop" names no branch or commit' in r.stderr, r.stderr
    r = qk(ws, "affected", "-t", "build", "--base", "trunk")
    assert r.returncode == 0, r.stdout + r.stderr
