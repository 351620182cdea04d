"""The run report's leaderboard sections (issue 25): intervals and paired comparisons, tables narrow
enough for a 1040-pixel page, and a zero bar that is drawn."""

from __future__ import annotations

import re

import pytest

from engine.report import export_run
from engine.report.model import BarChart, build_run_report
from engine.report.svg import bars_svg
from tests.tui.conftest import execute, make_benchmark, make_runtime


@pytest.fixture
def runtime(home, fake_openai):
    rt = make_runtime(home, fake_openai)
    make_benchmark(rt)
    yield rt
    rt.store.close()


def test_run_report_has_intervals_and_paired_comparisons(runtime):
    from engine.interview.run import RunRequest, plan_run

    run = plan_run(runtime, RunRequest(bench="flu", targets=["fake-a", "fake-b"], kernel="offline", turns=2))
    assert not any(execute(runtime, run).values())
    report = build_run_report(runtime.store, run)
    intervals = report.section("leaderboard-intervals")
    assert {r[1] for r in intervals.rows} == {"fake-a", "fake-b"}
    assert all("no interval: n=1" in r[3] for r in intervals.rows), "one item: no interval, said"
    paired = report.section("paired")
    assert paired.rows[0][3] == 1 and "no interval" in paired.rows[0][4]
    for section in report.sections:
        if hasattr(section, "columns"):
            assert len(section.columns) <= 11, f"{section.id} is too wide for the page"
    html = export_run(runtime.store, run, "html")
    assert "Leaderboard with 95% intervals" in html and "Paired comparisons" in html


def test_a_zero_bar_is_drawn():
    svg = bars_svg(BarChart("c", "Score", ["a", "b"], ["Score"], [[0.0], [50.0]], v_max=100.0, fmt=".1f"))
    widths = [float(w) for w in re.findall(r"<rect class='bar' [^>]*width='([\d.]+)'", svg)]
    assert widths[0] >= 2.0 and widths[1] > widths[0]
