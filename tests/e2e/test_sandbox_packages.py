"""Installed packages in the audit, on real installs by pnpm 9 and pnpm 10 (their .pnpm directory names
differ): a package the key leaves out (unkeyedPackages), one found through pnpm's hoisting
(hoistedPackages), an npm: alias, a peer-suffixed and a hashed (upper-case) directory, what lies elsewhere
in node_modules, a workspace link (the linked-sibling and self-link rules), a nested workspace covered by
a glob, a lockfile an input selects, and node-linker=hoisted, where nothing is reported."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import pnpm_install as pi
import qk_harness as h
from audit_workspace import audit_text, qk, sandbox

WORKSPACE = {
    "package.json": {"name": "root", "private": True, "devDependencies": {"is-number": "7.0.0"}},
    "pnpm-workspace.yaml": "packages:\n  - packages/*\n  - packages/app/e2e\n",
    "packages/app/package.json": {
        "name": "app",
        "version": "1.0.0",
        "dependencies": {"lib": "workspace:*", "alias-odd": "npm:is-odd@3.0.1", "react": "18.2.0",
                         "react-dom": "18.2.0", "JSONStream": "1.3.5"},
    },
    "packages/lib/package.json": {"name": "lib", "version": "1.0.0", "dependencies": {"ms": "2.1.3"}},
    "packages/app/e2e/package.json": {
        "name": "app-e2e", "version": "1.0.0", "private": True,
        "devDependencies": {"app": "workspace:*", "lib": "workspace:*", "is-even": "1.0.0"},
    },
}

NM = "packages/app/node_modules"
APP_TARGETS = {
    # The spec's `fallow`: a tool only the root installs, read by a task naming its externalDependencies.
    "lint": {"command": f"cat node_modules/is-number/package.json {NM}/react/package.json > /dev/null",
             "inputs": ["default", {"externalDependencies": ["react"]}]},
    # The spec's `phantom`: lib installs ms; app reaches it only through pnpm's private hoisting. What lies
    # elsewhere in node_modules, and packages app installs (alias, peers, hashed name), are never reported.
    # (Its inputs leave packages/app/e2e out: covering it would cover what e2e reaches, lib's ms included.)
    "build": {"inputs": ["{projectRoot}/src/**/*"],"command": "cat node_modules/.pnpm/node_modules/ms/package.json node_modules/.modules.yaml"
                         f" {NM}/alias-odd/package.json {NM}/react-dom/package.json {NM}/JSONStream/package.json"
                         f" {NM}/JSONStream/index.js node_modules/.pnpm/lock.yaml > /dev/null && ls node_modules/.pnpm > /dev/null"},
    # A linked workspace project is its files: lib's manifest and sources; app's own, through a link, is
    # still outside this task's inputs (self-link).
    "linked": {"command": f"cat {NM}/lib/package.json {NM}/lib/index.js"
                          " node_modules/.pnpm/node_modules/app/banner.txt > /dev/null",
               "inputs": ["{projectRoot}/src/**/*"]},
    # A glob covering the nested workspace packages/app/e2e (an input's, as default's {projectRoot}/**/*,
    # or an ignoreReads one) covers what it installs; without one, is-even (which only e2e installs) is a
    # package nothing app installs depends on.
    "covered": {"command": "cat packages/app/e2e/node_modules/is-even/package.json > /dev/null",
                "inputs": ["{projectRoot}/src/**/*"],
                "qk:ultracache": {"ignoreReads": ["{projectRoot}/e2e/**"]}},
    "coveredbyinput": {"command": "cat packages/app/e2e/node_modules/is-even/package.json > /dev/null"},
    # ... and the workspace projects it links to: lib's manifest, read through e2e's link (as `qk show task
    # --rules` says: "read what packages/app/e2e install and link to").
    "coveredlink": {"command": "cat packages/app/e2e/node_modules/lib/package.json > /dev/null",
                    "inputs": ["{projectRoot}/src/**/*"],
                    "qk:ultracache": {"ignoreReads": ["{projectRoot}/e2e/**"]}},
    "uncovered": {"command": "cat packages/app/e2e/node_modules/is-even/package.json > /dev/null",
                  "inputs": ["{projectRoot}/src/**/*"]},
    # An input selecting the lockfile keys every package: nothing is reported.
    "wholelock": {"command": "cat node_modules/.pnpm/node_modules/ms/package.json > /dev/null",
                  "inputs": ["default", "{workspaceRoot}/pnpm-lock.yaml"]},
}
LIB_TARGETS = {
    # lib installs only ms: app's packages are outside its key, under their real names.
    "peek": {"command": f"cat {NM}/alias-odd/package.json {NM}/react-dom/package.json"
                        f" {NM}/JSONStream/package.json > /dev/null"},
    # The same packages where node-linker=hoisted puts them: real directories in the root node_modules.
    "peekflat": {"command": "cat node_modules/alias-odd/package.json node_modules/react-dom/package.json"
                            " node_modules/JSONStream/package.json node_modules/ms/package.json > /dev/null"},
}
QK_FILES = {
    "nx.json": {"namedInputs": {"default": ["{projectRoot}/**/*"]}},
    "packages/app/project.json": {"name": "app", "targets": APP_TARGETS},
    "packages/lib/project.json": {"name": "lib", "targets": LIB_TARGETS},
    "packages/app/src/main.txt": "main\n",
    "packages/app/banner.txt": "banner\n",
    "packages/lib/index.js": "module.exports = 1\n",
}

EXPECTED = {
    "app:lint": {"unkeyedPackages": ["is-number"]},
    "app:build": {"hoistedPackages": ["ms"]},
    "app:linked": {"manifestReads": ["packages/lib/package.json"], "dependencyReads": {"lib": ["packages/lib/index.js"]},
                   "readsOutsideInputs": ["packages/app/banner.txt"]},
    "app:covered": {},
    "app:coveredbyinput": {},
    "app:coveredlink": {},
    "app:uncovered": {"hoistedPackages": ["is-even"]},
    "app:wholelock": {},
    "lib:peek": {"hoistedPackages": ["JSONStream", "is-odd", "react-dom"]},
}
TARGETS = "lint,build,linked,covered,coveredbyinput,coveredlink,uncovered,wholelock,peek"


def install(tmp_path_factory, major: int, npmrc: str = "") -> Path:
    root = Path(os.path.realpath(tmp_path_factory.mktemp(f"pkgs-pnpm{major}-"))) / "ws"
    root.mkdir()
    files = dict(WORKSPACE)
    if npmrc:
        files[".npmrc"] = npmrc
    pi.write_workspace(root, files)
    pi.install(root, major)
    pi.write_workspace(root, QK_FILES)
    return root


@pytest.fixture(scope="module", params=[9, 10], ids=["pnpm9", "pnpm10"])
def installed(request, tmp_path_factory) -> Path:
    return install(tmp_path_factory, request.param)


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_installed_packages_outside_the_key(installed, recorder, tmp_path):
    r, doc = sandbox(installed, TARGETS, recorder, tmp_path / "report.json", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    findings = {t: v.get("findings") for t, v in doc["tasks"].items()}
    assert findings == EXPECTED, json.dumps(findings, indent=1)
    # Packages the sandbox allows do not make a task go beyond what it declares.
    assert doc["summary"]["wentBeyond"] == 1, doc["summary"]
    text = audit_text(r.stdout)
    assert text.startswith("Sandbox audit: 1 of 9 tasks went beyond what they declare\n"), text
    assert ("  app:lint\n"
            "    1 installed package read, which the sandbox allows, but not in its key; name it in its "
            "externalDependencies:\n"
            "      is-number\n") in text, text
    assert ("  app:build\n"
            "    1 installed package read that nothing its importers install depends on, which the sandbox "
            "allows, found through pnpm's hoisting; declare it as a dependency of the package importing it:\n"
            "      ms\n") in text, text
    assert ("  lib:peek\n"
            "    3 installed packages read that nothing its importers install depends on, which the sandbox "
            "allows, found through pnpm's hoisting; declare them as dependencies of the packages importing "
            "them:\n"
            "      JSONStream\n      is-odd\n      react-dom\n") in text, text


def test_the_spec_fallow_example(installed, tmp_path):
    r, doc = sandbox(installed, "lint", "ebpf", tmp_path / "report.json", "-p", "app", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    assert audit_text(r.stdout) == (
        "Sandbox audit: 1 task kept to what it declares\n"
        "  app:lint\n"
        "    1 installed package read, which the sandbox allows, but not in its key; name it in its "
        "externalDependencies:\n"
        "      is-number\n"
    ), r.stdout


@pytest.mark.parametrize("recorder", h.RECORDERS)
def test_node_linker_hoisted_reports_no_package(recorder, tmp_path_factory, tmp_path):
    root = install(tmp_path_factory, 10, npmrc="node-linker=hoisted\n")
    assert (root / "node_modules/JSONStream/package.json").is_file()  # a real directory, not a link
    r, doc = sandbox(root, "peekflat", recorder, tmp_path / "report.json", "--skip-cache", "-p", "lib")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["tasks"]["lib:peekflat"] == {"project": "lib", "status": "audited", "findings": {}}, doc


# A package that imports one it does not declare (shout requires ms, which only lib installs): node finds
# it through pnpm's hoisting. The report names the importer; qk report fix declares the dependency in
# pnpm's packageExtensions (pnpm-workspace.yaml from pnpm 10, package.json's "pnpm" for pnpm 9); once pnpm
# installs again the task's key holds the package and the audit finds nothing.
PHANTOM = {
    "package.json": {"name": "root", "private": True},
    "pnpm-workspace.yaml": "packages:\n  - packages/*\n\n# what pnpm may build\nonlyBuiltDependencies: []\n",
    "vendor/shout/package.json": {"name": "shout", "version": "1.0.0", "main": "index.js"},
    "vendor/shout/index.js": "const ms = require(\"ms\");\nmodule.exports = (t) => ms(t);\n",
    "packages/app/package.json": {"name": "app", "version": "1.0.0",
                                  "dependencies": {"shout": "file:../../vendor/shout"}},
    "packages/lib/package.json": {"name": "lib", "version": "1.0.0", "dependencies": {"ms": "2.1.3"}},
}
PHANTOM_QK = {
    "nx.json": {"namedInputs": {"default": ["{projectRoot}/**/*"]}},
    "packages/app/project.json": {"name": "app", "targets": {
        "build": {"command": "cd packages/app && node -e \"process.exit(require('shout')('1h') === 3600000 ? 0 : 1)\""}}},
    "packages/lib/project.json": {"name": "lib", "targets": {}},
}


@pytest.mark.parametrize("major", [9, 10], ids=["pnpm9", "pnpm10"])
def test_fix_declares_the_importer_of_a_hoisted_package_in_package_extensions(major, tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    files = dict(PHANTOM)
    if major == 9:
        files["package.json"] = {**PHANTOM["package.json"], "packageManager": "pnpm@9.15.9"}
    pi.write_workspace(root, files)
    pi.install(root, major)
    pi.write_workspace(root, PHANTOM_QK)
    r, doc = sandbox(root, "build", "ebpf", tmp_path / "r1.json", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    task = doc["tasks"]["app:build"]
    assert task["findings"] == {"hoistedPackages": ["ms"]}, task
    assert task["hoistedImporters"] == {"ms": {"installed": "2.1.3", "importedBy": ["shout@file:vendor/shout"]}}, task

    fixed = qk(root, "report", "fix", str(tmp_path / "r1.json"), "--write")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    home = "package.json" if major == 9 else "pnpm-workspace.yaml"
    assert fixed.stdout == f"qk report fix: wrote {home}\n", fixed.stdout + fixed.stderr
    assert "then run pnpm install" in fixed.stderr, fixed.stderr
    if major == 9:
        assert json.loads((root / "package.json").read_text())["pnpm"] == {
            "packageExtensions": {"shout": {"dependencies": {"ms": "2.1.3"}}}}
    else:
        assert (root / "pnpm-workspace.yaml").read_text() == (
            "packages:\n  - packages/*\n\n# what pnpm may build\nonlyBuiltDependencies: []\n"
            "\npackageExtensions:\n  'shout':\n    dependencies:\n      'ms': '2.1.3'\n")

    pi.install(root, major)
    r, doc = sandbox(root, "build", "ebpf", tmp_path / "r2.json", "--skip-cache")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["tasks"]["app:build"]["findings"] == {}, doc["tasks"]["app:build"]
    again = qk(root, "report", "fix", str(tmp_path / "r1.json"))
    assert again.stdout == "", again.stdout  # written once: the same report asks nothing more


def test_a_script_swapped_for_a_fifo_after_it_was_read_does_not_hold_the_audit(tmp_path):
    # A hostile task reads the importer, then leaves a FIFO in its place: the audit, which reads the
    # scripts the task read to name importers, must neither block on it nor name an importer from it.
    root = tmp_path / "ws"
    root.mkdir()
    pi.write_workspace(root, PHANTOM)
    pi.install(root, 10)
    qk_files = json.loads(json.dumps(PHANTOM_QK))
    qk_files["packages/app/project.json"]["targets"]["build"]["command"] += (
        " && f=$(realpath node_modules/shout/index.js) && rm \"$f\" && mkfifo \"$f\"")
    pi.write_workspace(root, qk_files)
    r, doc = sandbox(root, "build", "ebpf", tmp_path / "r.json", "--skip-cache")
    task = doc["tasks"]["app:build"]
    assert task["findings"]["hoistedPackages"] == ["ms"], task
    assert "hoistedImporters" not in task, task
