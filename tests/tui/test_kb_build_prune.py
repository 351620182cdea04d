"""`viva kb build NAME one_file` on an existing knowledge base asks before it removes the rest
(issue 25, defect 10): without a terminal it stops and says how to go on."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from tui.cli import main

DOCS = Path(__file__).resolve().parents[1] / "engine" / "fixtures" / "kb" / "docs"


def test_a_partial_rebuild_stops_unless_pruned(home, tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    runner = CliRunner()
    first = runner.invoke(main, ["--home", str(home), "kb", "build", "k", str(docs), "--quiet"])
    assert first.exit_code == 0, first.output
    one = docs / "baking.txt"
    stopped = runner.invoke(main, ["--home", str(home), "kb", "build", "k", str(one), "--quiet"])
    assert stopped.exit_code != 0
    assert "has 2 document(s) not under the paths given" in stopped.output and "--prune" in stopped.output
    kept = runner.invoke(main, ["--home", str(home), "kb", "build", "k", str(docs), "--quiet"])
    assert "0 removed" in kept.output, "nothing was removed by the refused build"
    pruned = runner.invoke(main, ["--home", str(home), "kb", "build", "k", str(one), "--prune", "--quiet"])
    assert pruned.exit_code == 0 and "2 removed" in pruned.output, pruned.output
