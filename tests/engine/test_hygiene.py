"""The engine never imports textual; the CLI and README stay in step."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parents[2]


def engine_modules() -> list[str]:
    names = ["engine"]
    for info in pkgutil.walk_packages(engine.__path__, prefix="engine."):
        if info.name != "engine.__main__":
            names.append(info.name)
    return names


def test_engine_never_imports_textual():
    code = (
        "import importlib, sys\n"
        f"for name in {engine_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad[:5]))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, f"engine imported textual: {proc.stdout} {proc.stderr[-2000:]}"


def test_every_command_is_in_help_and_readme():
    from click.testing import CliRunner

    from tui.cli import main

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in main.commands:
        assert f"  {name}" in result.output, f"{name} missing from viva --help"
        assert f"`viva {name}" in readme, f"viva {name} is not documented in README.md"
