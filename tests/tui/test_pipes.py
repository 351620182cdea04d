"""Output for pipes and people (issue 37): tables whole when piped, TSV and JSON for programs, a run that
ends with a summary and the command that lists its sessions (not hundreds of ids), progress that ends at
100%, and bar-chart labels that fit their box."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.report.model import BarChart
from engine.report.svg import CHAR_PX, LABEL_MARGIN, bars_svg
from engine.store import Store
from tests.engine.interview_fixtures import is_target, make_bench, target_reply
from tui.cli import main
from tui.cli.run import run_summary


def invoke(home: Path, *args: str):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


@pytest.fixture
def ran(home, fake_openai):
    store = Store(home / "viva.db")
    make_bench(store, n_items=2)
    store.close()
    fake_openai.rule(is_target, target_reply)
    spec = f"openai:a-rather-long-model-name-for-a-narrow-pipe@{fake_openai.base_url}"
    result = invoke(home, "run", "--bench", "oxy", "--target", spec, "--kernel", "offline", "--policy",
                    "threshold", "--turns", "2")
    assert result.exit_code == 0, result.output
    return home, spec, result


def test_a_run_ends_with_a_summary_and_the_command_to_list_its_sessions(ran):
    _, _, result = ran
    last = result.stdout.strip().splitlines()[-1]
    assert last == "run 1: 2 sessions of 1 target(s), 2 finished; list them with `viva sessions --filter run:1`"
    assert "sessions 1, 2" not in result.stdout


def test_summary_counts_every_outcome():
    rows = [{"sessions": [1, 2, 3, 4, 5], "finished": 2, "not_examined": [3]},
            {"sessions": [6, 7], "finished": 1, "not_examined": []}]
    assert run_summary(4, rows, {4: "boom"}) == (
        "run 4: 7 sessions of 2 target(s), 3 finished, 1 failed, 1 not examined, 2 not ended "
        "(`viva resume run:4`); list them with `viva sessions --filter run:4`")


def test_piped_tables_are_whole_and_tsv_is_there(ran):
    home, spec, result = ran
    assert spec in result.stdout, "the leaderboard's target cell is not cut when piped"
    listed = invoke(home, "sessions")
    assert spec in listed.stdout and "…" not in listed.stdout
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", listed.stdout), "the created time is whole"
    tsv = invoke(home, "sessions", "--tsv").stdout.splitlines()
    assert tsv[0].split("\t") == ["id", "status", "protocol", "target", "item", "turns", "score", "created"]
    assert len(tsv) == 3 and all(len(line.split("\t")) == 8 for line in tsv)
    assert tsv[1].split("\t")[3] == spec
    both = invoke(home, "sessions", "--tsv", "--json")
    assert both.exit_code == 2


def test_progress_ends_at_100_percent_when_sessions_end_early(home, fake_openai, tmp_path, monkeypatch):
    store = Store(home / "viva.db")
    make_bench(store, n_items=2)
    store.close()
    (tmp_path / "half_agent.py").write_text(
        "class Agent:\n"
        "    def reply(self, messages):\n"
        "        if '(item 1)' in messages[0]['content']:\n"
        "            raise RuntimeError('down')\n"
        "        return 'Oxygen is the most abundant element in the Earth\\'s crust.'\n")
    monkeypatch.chdir(tmp_path)
    result = invoke(home, "run", "--bench", "oxy", "--target", "python:half_agent:Agent", "--kernel", "offline",
                    "--policy", "threshold", "--turns", "3")
    assert result.exit_code == 1  # one session failed
    judged = re.findall(r"viva: turns judged (\d+)/(\d+) \((\d+)%\)", result.stderr)[-1]
    assert judged[0] == judged[1] and judged[2] == "100", "planned 6, judged 3: the run ended, so 3/3"


def test_bar_labels_fit_their_box():
    long = "python:engine.demo.echo:EchoAgent#sys:0123abcd"
    svg = bars_svg(BarChart("c", "Score", [long, "short"], ["Score"], [[10.0], [50.0]], v_max=100.0, fmt=".1f"))
    tags = [t for t in re.findall(r"<text [^>]*>", svg) if "text-anchor='end'" in t and "#111827" in t]
    fitted = [t for t in tags if "textLength" in t]
    assert len(tags) == 2 and len(fitted) == 1, "the long label is fitted, the short one left alone"
    x = re.search(r"x='(\d+)'", fitted[0]).group(1)
    length = re.search(r"textLength='(\d+)'", fitted[0]).group(1)
    assert int(x) - int(length) == LABEL_MARGIN >= 0
    assert len("short") * CHAR_PX <= int(x) - LABEL_MARGIN
