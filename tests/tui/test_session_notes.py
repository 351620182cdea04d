"""Session notes in the app (issue 23): a session's ``session.note`` events (a prompt cut to fit the model's
context, a turn that could not be judged, a question skipped...) are counted in the header and shown under
their turns in the interview pane, live and in review. The session here is real: a target whose context
(``context:``, enforced by the fake server without reporting it) holds only its latest turn."""

from __future__ import annotations

import pytest

from engine import events as ev
from engine.api import Engine
from engine.config import Config, ModelConfig
from engine.events.fold import SessionView
from engine.runtime import Runtime
from tests.tui.conftest import freeze_timings, make_benchmark, run_to_end, wait_for
from tui.launch import build_app
from tui.screens.review import ReviewScreen
from tui.widgets.header import SessionHeader
from tui.widgets.interview import InterviewPane

CONTEXT = 700
"""The target's context in tokens: a question and one earlier long answer fit, two do not."""


def long_answer(body) -> str:
    asked = sum(1 for m in body.get("messages", []) if m.get("role") == "user")
    return (f"Influenza is caused by influenza viruses (answer {asked}). "
            + " ".join(f"Detail {i} about how influenza spreads." for i in range(25)))


@pytest.fixture
def trimmed(home, fake_openai):
    """A finished three-turn session whose target conversation was cut at turn 2 (its oldest turn left out):
    returns (runtime, session id)."""
    fake_openai.context, fake_openai.report_context = CONTEXT, False
    fake_openai.default = long_answer
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="fake-model", timeout=10.0, max_retries=1,
                           context=CONTEXT)
    rt = Runtime(home=home, config=Config(targets={"small": endpoint}))
    make_benchmark(rt)
    sid = run_to_end(rt, target="small", turns=3)
    freeze_timings(rt)
    yield rt, sid
    rt.store.close()


def test_the_fold_keeps_each_note_under_its_turn():
    view = SessionView(1)
    view.apply(1, ev.TURN_STARTED, {"turn": 0, "question": "Q0", "action": "initial", "actor": "kernel"})
    view.apply(2, ev.SESSION_NOTE, {"turn": 1, "what": "prompt-trimmed", "text": "follow-up question prompt cut"})
    # a note on a turn not started yet waits under the last turn...
    assert [n.text for n in view.notes_under(0)] == ["follow-up question prompt cut"]
    view.apply(3, ev.TURN_STARTED, {"turn": 1, "question": "Q1", "action": "follow-up", "actor": "kernel"})
    # ...and moves to its own turn once it starts
    assert view.notes_under(0) == [] and [n.turn for n in view.notes_under(1)] == [1]
    view.apply(4, ev.SESSION_NOTE, {"turn": 1, "what": "cannot-judge", "text": "judge reply unusable"})
    view.apply(5, ev.SESSION_NOTE, {"turn": -1, "what": "not-rated", "text": "ratings unusable"})
    view.apply(6, ev.SESSION_NOTE, {"turn": -1, "what": "not-examined", "text": "x"})
    assert [n.label for n in view.notes_under(1)] == ["prompt trimmed", "cannot judge", "not rated", "not examined"]
    # the header's counts leave "not examined" to the status line that says it
    assert view.note_counts() == [("prompt trimmed", 1), ("cannot judge", 1), ("not rated", 1)]


async def test_review_shows_the_notes_in_the_header_and_under_their_turns(trimmed):
    rt, sid = trimmed
    notes = [e.payload for e in rt.store.events(0, sid) if e.kind == ev.SESSION_NOTE]
    # (the examiner's pressure test one turn before the end, held, then the last turn's follow-up: docs/examination.md)
    assert [(n["turn"], n["what"]) for n in notes] == [(1, "pressure-test"), (2, "elicit-after-test"),
                                                       (2, "prompt-trimmed")]
    app = build_app(Engine(rt), "review", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.state is not None
                       and app.screen.state.status == "finished", "the review")
        await pilot.pause()
        header = str(app.screen.query_one(SessionHeader).render())
        assert "notes: pressure test ×1 · elicit after test ×1 · prompt trimmed ×1  (under their turns)" in header
        pane = app.screen.query_one(InterviewPane)
        assert "note" not in pane.turn_text(0)
        assert "note pressure test" in " ".join(pane.turn_text(1).split()).replace("▌ ", "")
        text = " ".join(pane.turn_text(2).split())
        assert ("note prompt trimmed: target small prompt cut to fit the model's context: the conversation: the 1 "
                "oldest of 2 earlier turn(s) left out") in text.replace("▌ ", "")


def test_review_with_notes_at_100x30(snap_compare, trimmed):
    rt, sid = trimmed
    app = build_app(Engine(rt), "review", session_id=sid)

    async def ready(pilot):
        await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None,
                       "the replay")
        pane = app.screen.query_one(InterviewPane)
        # the last turn is selected and the pane scrolls to it after a refresh: on a loaded machine the
        # picture could be taken before (the conversation's top shown; a CI run saw it)
        await wait_for(pilot, lambda: pane.max_scroll_y > 0 and pane.scroll_y >= pane.max_scroll_y,
                       "the interview scrolled to its last turn",
                       debug=lambda: f"scroll_y {pane.scroll_y}, max {pane.max_scroll_y}, size {pane.size}")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=ready)


async def test_the_selected_turn_stays_in_view_when_the_terminal_is_resized(trimmed):
    """Opened on its last turn, the review keeps the end of the conversation in view when the terminal gets
    smaller or narrower (the scroll asked for at the old size is asked again at the new one)."""
    rt, sid = trimmed
    app = build_app(Engine(rt), "review", session_id=sid)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None,
                       "the replay")
        pane = app.screen.query_one(InterviewPane)
        await wait_for(pilot, lambda: pane.max_scroll_y > 0 and pane.scroll_y >= pane.max_scroll_y,
                       "the interview scrolled to its last turn")
        for size in ((100, 20), (70, 20)):
            await pilot.resize_terminal(*size)
            await wait_for(pilot, lambda: pane.scroll_y >= pane.max_scroll_y > 0,
                           f"the last turn in view at {size}",
                           debug=lambda: f"scroll_y {pane.scroll_y}, max {pane.max_scroll_y}")
