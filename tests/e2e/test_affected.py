"""qk affected, as CI scripts call Nx's: the projects a git change touches (a file inside a project), the
projects whose tasks key a changed root file (the lockfile, a shared config), and every project that
depends on one of those; from git (--base, --head, the working tree with untracked files) or --files."""

from __future__ import annotations

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
