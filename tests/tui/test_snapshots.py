"""Snapshots of the live, rubric editor, review and compare screens at 120x40.

The sessions are run by the real engine against the fake server; measured latencies and dates are
then fixed (``freeze_timings``) so the pictures do not depend on the machine. Update with
``pytest tests/tui/test_snapshots.py --snapshot-update`` and look at the diff before accepting it.
"""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.interview.control import override_verdict
from tests.tui.conftest import freeze_timings, run_to_end, wait_for
from tui.launch import build_app

SIZE = (120, 40)


@pytest.fixture
def sessions(runtime):
    """Session 1 (fake-a, threshold policy, an override) and session 2 (fake-b, always challenge)."""
    a = run_to_end(runtime, target="fake-a", turns=3, policy="threshold")
    b = run_to_end(runtime, target="fake-b", turns=3, policy="always-challenge")
    override_verdict(runtime.store, a, 1, "c3", True, "vaccination is implied")
    freeze_timings(runtime)
    return a, b


def test_live_screen(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "live", session_id=sessions[0])

    async def ready(pilot):
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.status == "finished"
                       and app.screen.state.metrics, "the session")
        await pilot.press("up")  # select turn 1, the one with the override
        await pilot.press("tab", "down", "down")  # highlight c3 in the checklist
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_rubric_editor(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "live", session_id=sessions[0])

    async def ready(pilot):
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.turns, "the session")
        await pilot.press("r")
        await wait_for(pilot, lambda: getattr(app.screen, "draft", None) is not None, "the editor")
        await pilot.press("j", "plus", "j", "t", "J")  # c2 heavier; c3 a deduction, moved down
        await pilot.press("a")
        await wait_for(pilot, lambda: app.screen.editing is not None, "the new row")
        for key in "Names a complication":
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_review_screen(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "review", session_id=sessions[0])

    async def ready(pilot):
        await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None,
                       "the replay")
        await pilot.press("left", "left")  # after turn 1 was judged, before the override
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_compare_screen(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "review", session_id=sessions[0])

    async def ready(pilot):
        await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None,
                       "the replay")
        app.open_compare(*sessions)
        await wait_for(pilot, lambda: getattr(app.screen, "states", None), "the comparison")
        await pilot.press("right")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
