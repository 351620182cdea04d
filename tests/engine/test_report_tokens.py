"""A report's turn table and its summary agree on tokens and cost (issue 36): where a call of the session
had no counts from its server, both say "unknown", never 0, in every format.

Real sessions through the engine (offline kernel), the target behind the fake OpenAI server; one run with
the server's streams carrying ``usage``, one without (as llama-cpp-python's)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from engine.report.model import build_run_report, build_session_report
from engine.report.render import render
from tests.tui.conftest import make_benchmark, make_runtime, run_to_end


@pytest.fixture
def sessions(home, fake_openai):
    rt = make_runtime(home, fake_openai)
    make_benchmark(rt)
    counted = run_to_end(rt, target="fake-a", turns=2)
    fake_openai.stream_usage = False
    uncounted = run_to_end(rt, target="fake-b", turns=2)
    yield rt, counted, uncounted
    rt.store.close()


def _rows(report, section_id):
    section = report.section(section_id)
    return section, [dict(zip(section.columns, r, strict=True)) for r in getattr(section, "rows", [])]


def test_turn_table_and_summary_say_unknown_together(sessions):
    rt, counted, uncounted = sessions
    report = build_session_report(rt.store, uncounted)
    summary = {r.label: r for r in report.section("summary").rows}
    assert summary["tokens in"].value == "unknown" and summary["cost"].value == "unknown"
    turns, rows = _rows(report, "turns")
    assert rows and all((r["tokens in"], r["tokens out"], r["cost"]) == ("unknown",) * 3 for r in rows)
    assert "had no counts" in turns.note
    # JSON: null, not 0
    doc = json.loads(render(report, "json"))
    assert all((t["tokens_in"], t["tokens_out"], t["cost"]) == (None, None, None) for t in doc["turns"])
    assert doc["metrics"]["cost"] is None and doc["metrics"]["tokens_unknown"] >= 1
    # CSV, Markdown and HTML carry the word
    table = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert table and all((r["tokens_in"], r["tokens_out"], r["cost"]) == ("unknown",) * 3 for r in table)
    md = render(report, "md")
    turn_lines = [line for line in md.split("## Turns", 1)[1].split("##", 1)[0].splitlines() if line.startswith("| 1 ")]
    assert turn_lines and "unknown | unknown | unknown" in turn_lines[0]
    assert "0 | 0 | 0.0000" not in md
    assert render(report, "html").count(">unknown<") >= 3 * len(rows)

    # a session whose calls all had counts keeps its numbers, and they add up to the summary
    report = build_session_report(rt.store, counted)
    summary = {r.label: r.value for r in report.section("summary").rows}
    _, rows = _rows(report, "turns")
    assert summary["tokens in"] == sum(r["tokens in"] for r in rows) > 0
    assert summary["cost"] == pytest.approx(sum(r["cost"] for r in rows))


def test_run_report_costs_are_unknown_with_the_tokens(sessions):
    rt, counted, uncounted = sessions
    run = rt.store.one("SELECT run_id FROM sessions WHERE id = ?", (uncounted,))["run_id"]
    report = build_run_report(rt.store, run)
    summary = {r.label: r.value for r in report.section("summary").rows}
    assert summary["tokens in"] == summary["cost"] == "unknown"
    _, spend = _rows(report, "spend")
    assert spend and all(r["cost"] == "unknown" for r in spend)
    doc = json.loads(render(report, "json"))
    assert doc["totals"]["cost"] is None and doc["leaderboard"][0]["cost"] is None
