"""Architecture hygiene: each engine module imports alone and without UI packages; the import
contracts hold (and can fail); the CLI and README stay in step."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")  # import-linter's command, from the dev extras


def engine_modules() -> list[str]:
    names = ["engine"]
    for info in pkgutil.walk_packages(engine.__path__, prefix="engine."):
        names.append(info.name)
    return names


# Each module is imported in a process of its own, forked from a bare interpreter (two at a time),
# so a failure names the module that imports a UI package, or fails to import on its own.
CHECK = r"""
import importlib, json, os, sys
names = json.loads(sys.argv[1])
FORBIDDEN = ("textual", "tui")  # click arrives with sqlite-utils; the static contract covers our own imports
def check(name):
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(name)
        except BaseException as exc:
            print(f"{name}: cannot be imported alone: {type(exc).__name__}: {exc}", flush=True)
            os._exit(2)
        bad = sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN)
        if bad:
            print(f"{name}: imports {', '.join(bad[:5])}", flush=True)
            os._exit(1)
        os._exit(0)
    return pid
failed = 0
running = []
for name in names:
    running.append(check(name))
    if len(running) >= 2:
        failed |= os.waitpid(running.pop(0), 0)[1]
for pid in running:
    failed |= os.waitpid(pid, 0)[1]
sys.exit(1 if failed else 0)
"""


def test_each_engine_module_imports_alone_without_ui_packages():
    import json

    proc = subprocess.run([sys.executable, "-c", CHECK, json.dumps(engine_modules())], capture_output=True,
                          text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, f"{proc.stdout}{proc.stderr[-2000:]}"


def test_import_contracts_hold():
    """import-linter: the engine imports neither tui, textual nor click; tui reaches the engine only
    through engine.api and engine.events; inside the engine no import runs back up its layers
    (contracts in pyproject.toml)."""
    proc = subprocess.run([LINT_IMPORTS, "--config", str(ROOT / "pyproject.toml")], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "3 kept, 0 broken" in proc.stdout


def test_import_contracts_catch_an_engine_module_importing_the_app(tmp_path):
    """The first contract fails on a violation (checked on a copy of the tree with one planted)."""
    import shutil

    copy = tmp_path / "tree"
    for part in ("engine", "tui"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__", "__snapshots__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    (copy / "engine" / "planted.py").write_text('"""A violation."""\n\nimport tui.app  # noqa: F401\n')
    import os

    env = {**os.environ, "PYTHONPATH": str(copy)}
    proc = subprocess.run([LINT_IMPORTS, "--config", str(copy / "pyproject.toml"), "--no-cache"],
                          capture_output=True, text=True, cwd=copy, env=env, timeout=300)
    assert proc.returncode != 0, proc.stdout
    assert "engine.planted -> tui.app" in proc.stdout


def test_every_command_is_in_help_and_readme():
    from click.testing import CliRunner

    from tui.cli import main

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in main.commands:
        assert f"  {name}" in result.output, f"{name} missing from viva --help"
        assert f"`viva {name}" in readme, f"viva {name} is not documented in README.md"
