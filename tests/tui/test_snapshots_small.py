"""Snapshots of Home, Live and Review at 100x30 (issue 25, defect 11): the Home table fits (the
score and a short date stay), the checklist shows every criterion with room for its text, and the
metric panel does not wrap a figure. Update with ``--snapshot-update`` after looking at the diff."""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.interview.control import override_verdict
from tests.tui.conftest import freeze_timings, run_to_end, wait_for
from tui.launch import build_app
from tui.widgets.sessions import SessionsTable

SIZE = (100, 30)


@pytest.fixture
def sessions(runtime):
    a = run_to_end(runtime, target="fake-a", turns=3, policy="threshold")
    b = run_to_end(runtime, target="fake-b", turns=3, policy="always-challenge")
    override_verdict(runtime.store, a, 1, "c3", True, "vaccination is implied")
    freeze_timings(runtime)
    return a, b


def test_home_at_100x30(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "home")

    async def ready(pilot):
        await wait_for(pilot, lambda: app.screen.query_one(SessionsTable).row_count == 2, "the sessions")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_live_at_100x30(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "live", session_id=sessions[0])

    async def ready(pilot):
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.status == "finished"
                       and app.screen.state.metrics, "the session")
        await pilot.press("up")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_review_at_100x30(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "review", session_id=sessions[0])

    async def ready(pilot):
        await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None,
                       "the replay")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


async def test_home_table_fits_100_columns(runtime, sessions):
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == 2, "the sessions")
        await pilot.pause()
        widths = sum(c.get_render_width(table) for c in table.columns.values())
        assert widths <= table.size.width, (widths, table.size.width)
        assert str(table.get_row_at(0)[6]) in ("0.0", "100.0") or "." in str(table.get_row_at(0)[6])


async def test_checklist_and_metrics_fit_at_100x30(runtime, sessions):
    from tui.widgets.checklist import RubricChecklist
    from tui.widgets.metrics import MetricPanel

    app = build_app(Engine(runtime), "live", session_id=sessions[0])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.status == "finished"
                       and app.screen.state.metrics, "the session")
        await pilot.pause()
        checklist = app.screen.query_one(RubricChecklist)
        table = checklist.table
        assert table.row_count == 4 and table.size.height >= 5, "every criterion has a row on screen"
        text_col = table.columns["text"]
        assert text_col.width >= 20, "the criterion text has room"
        panel = app.screen.query_one(MetricPanel)
        # "turn 1  s 0.50   Δs +0.25   cos 0.99" (41 cells) on one line, or laid out shorter
        assert panel.narrow or panel.size.width >= 43, panel.size.width
