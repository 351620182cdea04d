"""Architecture hygiene: each engine module imports alone and without UI packages; the import
contracts hold (and can fail); the CLI and README stay in step."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import engine

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")  # import-linter's command, from the dev extras


def engine_modules() -> list[str]:
    names = ["engine"]
    for info in pkgutil.walk_packages(engine.__path__, prefix="engine."):
        names.append(info.name)
    return names


# Each module is imported in a process of its own, forked from an interpreter that holds no engine module
# (two at a time), so a failure names the module that imports a UI package, or fails to import on its own. The
# third-party packages the engine builds on are imported once before the forks (each fork would import them
# again: most of the check's time); they bring no UI package (checked), and an engine module is still imported
# with none of the engine's own before it.
CHECK = r"""
import importlib, json, os, sys
names = json.loads(sys.argv[1])
FORBIDDEN = ("textual", "tui")  # click arrives with sqlite-utils; the static contract covers our own imports
for package in ("numpy", "onnxruntime", "openai", "httpx", "pydantic", "yaml", "sqlite_utils", "whoosh", "tokenizers",
                "rich"):
    try:
        importlib.import_module(package)
    except ImportError:
        pass
assert not any(m.split(".")[0] in FORBIDDEN + ("engine",) for m in sys.modules), "a dependency imports the UI"
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


def lint_a_copy(tmp_path: Path, planted: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """lint-imports run on a copy of the tree (engine, tui, pyproject.toml) with ``planted`` files
    (path in the tree -> text) written into it."""
    import os
    import shutil

    copy = tmp_path / "tree"
    for part in ("engine", "tui"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__", "__snapshots__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    for path, text in planted.items():
        (copy / path).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(copy)}
    return subprocess.run([LINT_IMPORTS, "--config", str(copy / "pyproject.toml"), "--no-cache"],
                          capture_output=True, text=True, cwd=copy, env=env, timeout=300)


def test_import_contracts_catch_an_engine_module_importing_the_app(tmp_path):
    """The first contract fails on a violation (checked on a copy of the tree with one planted)."""
    proc = lint_a_copy(tmp_path, {"engine/planted.py": '"""A violation."""\n\nimport tui.app  # noqa: F401\n'})
    assert proc.returncode != 0, proc.stdout
    assert "engine.planted -> tui.app" in proc.stdout


def test_layers_contract_catches_an_import_running_back_up(tmp_path):
    """The layers contract fails on a lower layer importing a higher one, even inside a function
    (checked on a copy of the tree: the store importing the interview)."""
    planted = ('"""A violation."""\n\n\ndef upward():\n    from engine.interview.run import run_sessions\n\n'
               '    return run_sessions\n')
    proc = lint_a_copy(tmp_path, {"engine/store/planted.py": planted})
    assert proc.returncode != 0, proc.stdout
    assert "The engine's layers: no import runs back up BROKEN" in proc.stdout
    assert "engine.store is not allowed to import engine.interview" in proc.stdout
    assert "engine.store.planted -> engine.interview.run" in proc.stdout


def layers_ignored_imports() -> list[tuple[str, str]]:
    """The layers contract's ``ignore_imports`` (pyproject.toml) as (importer, imported) pairs."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [layers] = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [tuple(x.strip() for x in line.split("->")) for line in layers.get("ignore_imports", [])]


def package_cycles(graph: Any, ignored: list[tuple[str, str]] = ()) -> list[list[str]]:
    """Cycles among the engine's packages and top-level modules (``engine.X``): every import between
    two of them (from any module inside, function-local ones included) is an arrow X -> Y; each
    strongly connected group of more than one is a cycle. ``ignored`` imports are left out."""
    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    arrows: dict[str, set[str]] = {}
    for importer in graph.modules:
        if not importer.startswith("engine."):
            continue
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported.startswith("engine.") and top(importer) != top(imported) \
                    and (importer, imported) not in ignored:
                arrows.setdefault(top(importer), set()).add(top(imported))
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(arrows.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(arrows):
        if node not in index:
            visit(node)
    return cycles


def test_no_cycle_across_the_engines_packages():
    """No two of the engine's packages import each other, directly or round a longer loop (the
    layers contract's one ignored import aside); a planted upward arrow makes a cycle the check finds."""
    import grimp

    graph = grimp.build_graph("engine", cache_dir=None)
    ignored = layers_ignored_imports()
    assert ignored == []  # the text module took the last one away; none may come back
    assert package_cycles(graph, ignored) == []
    graph.add_import(importer="engine.events.fold", imported="engine.store.db")  # planted: the store imports events
    assert package_cycles(graph, ignored) == [["engine.events", "engine.store"]]


def test_every_command_is_in_help_and_readme():
    from click.testing import CliRunner

    from tui.cli import main

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in main.commands:
        assert f"  {name}" in result.output, f"{name} missing from viva --help"
        assert f"`viva {name}" in readme, f"viva {name} is not documented in README.md"


def nested_package_cycles(graph: Any) -> list[tuple[str, str]]:
    """(nested package, module outside it) pairs that import each other, directly or round a longer loop:
    a package inside an engine package (``engine.interview.protocols``) imports the module and the module
    reaches back into the package."""
    nested = sorted(m for m in graph.modules if m.count(".") >= 2 and graph.find_children(m))
    found = []
    for package in nested:
        inside = graph.find_descendants(package) | {package}
        out = {i for m in inside for i in graph.find_modules_directly_imported_by(m)
               if i.startswith("engine.") and i not in inside}
        for module in sorted(out):
            if graph.chain_exists(importer=module, imported=package, as_packages=True):
                found.append((package, module))
    return found


def test_no_cycle_between_a_nested_package_and_the_modules_beside_it():
    """``engine.interview.protocols`` imported ``engine.interview.session``, whose overrides imported the
    protocols back; the overrides are ``engine.interview.overrides`` now. A planted arrow shows the check."""
    import grimp

    graph = grimp.build_graph("engine", cache_dir=None)
    assert nested_package_cycles(graph) == []
    graph.add_import(importer="engine.interview.session", imported="engine.interview.protocols")
    assert ("engine.interview.protocols", "engine.interview.session") in nested_package_cycles(graph)
