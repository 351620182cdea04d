"""Issue 25: the app holds up under an evaluator's ordinary keys (each test failed before its fix)."""

from __future__ import annotations

from textual.widgets import Input, Static

from engine.api import MAX_FILTER_CHARS, Engine
from tests.tui.conftest import run_to_end, wait_for
from tui.launch import build_app
from tui.widgets.sessions import SessionsTable


async def test_a_long_filter_says_why_and_the_list_recovers(runtime):
    a = run_to_end(runtime, target="fake-a", turns=1)
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the session list")
        filt = app.screen.query_one("#filter", Input)
        filt.value = "influenza " * 500  # a 5 KB paste
        await pilot.pause()
        error = app.screen.query_one("#filter-error", Static)
        assert error.display and f"the limit is {MAX_FILTER_CHARS}" in str(error.render())
        filt.value = " ".join(["fake"] * 13)  # short, but too many terms
        await pilot.pause()
        assert "13 terms" in str(error.render())
        filt.value = ""
        await wait_for(pilot, lambda: not error.display and not table.loading and table.shown_ids == [a],
                       "the list after clearing the filter")
