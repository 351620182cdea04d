"""Overrides are deliberate (issue 36): a preview that writes nothing, a note that may not be empty,
undo that restores every figure, a list of who did what and why, and steering refused on a
finished session instead of stored."""

from __future__ import annotations

import pytest

from engine.interview import control
from engine.metrics.sessions import session_metrics
from tests.tui.conftest import make_benchmark, make_runtime, run_to_end


@pytest.fixture
def runtime(home, fake_openai):
    rt = make_runtime(home, fake_openai)
    make_benchmark(rt)
    yield rt
    rt.store.close()


def _figures(store, sid):
    turns = store.query("SELECT score, delta FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
    return [(t["score"], t["delta"]) for t in turns], session_metrics(store, sid)["score"]


def test_preview_writes_nothing_and_matches_the_override(runtime):
    store = runtime.store
    sid = run_to_end(runtime, target="fake-a", turns=4, policy="always-follow-up")
    before = _figures(store, sid)
    events = store.one("SELECT COUNT(*) AS n FROM events WHERE session_id = ?", (sid,))["n"]
    seen = control.preview_override(store, sid, 0, "c3", True)
    assert _figures(store, sid) == before  # nothing written
    assert store.one("SELECT COUNT(*) AS n FROM events WHERE session_id = ?", (sid,))["n"] == events
    assert seen["before"]["met"] is False and seen["after"]["met"] is True
    assert seen["before"]["session_score"] == pytest.approx(before[1])
    assert seen["carried_to"] == [1]  # the judge says "not met" on turn 1 too; on turn 2 it says met
    result = control.override_verdict(store, sid, 0, "c3", True, "vaccination is implied")
    assert result["session_score"] == pytest.approx(seen["after"]["session_score"])
    assert result["score"] == pytest.approx(seen["after"]["turn_score"])


def test_a_note_is_required(runtime):
    sid = run_to_end(runtime, target="fake-a", turns=2)
    for note in ("", "   "):
        with pytest.raises(control.ControlError, match="needs a note"):
            control.override_verdict(runtime.store, sid, 0, "c3", True, note)
    assert runtime.store.one("SELECT COUNT(*) AS n FROM verdicts WHERE source = 'human'")["n"] == 0


def test_undo_restores_every_figure_and_keeps_the_record(runtime):
    store = runtime.store
    sid = run_to_end(runtime, target="fake-a", turns=4, policy="always-follow-up")
    before = _figures(store, sid)
    control.override_verdict(store, sid, 0, "c3", True, "first look", who="ana")
    control.override_verdict(store, sid, 0, "c3", False, "second look", who="ana")  # the judge's own: a confirmation
    control.override_verdict(store, sid, 1, "c3", True, "said so", who="bo")
    after_two = _figures(store, sid)
    result = control.undo_override(store, sid, 1, "c3", who="bo")
    assert result["source"] == "judge" and result["undone"]["note"] == "said so"
    first = control.undo_override(store, sid, 0, "c3", who="ana")
    assert first["source"] == "human" and first["met"] is True  # the earlier override is in force again
    control.undo_override(store, sid, 0, "c3", who="ana")
    assert _figures(store, sid) == before
    assert after_two != before
    with pytest.raises(control.ControlError, match="no override of c3 to undo"):
        control.undo_override(store, sid, 0, "c3")
    listed = control.overrides(store, session_id=sid)
    assert [(o["action"], o["turn"], o["cid"], o["by"]) for o in listed] == [
        ("override", 0, "c3", "ana"), ("confirm", 0, "c3", "ana"), ("override", 1, "c3", "bo"),
        ("undo", 1, "c3", "bo"), ("undo", 0, "c3", "ana"), ("undo", 0, "c3", "ana")]
    assert [o["undone"] for o in listed[:3]] == [True, True, True]
    assert listed[1]["note"] == "second look" and listed[1]["at"].endswith("UTC")
    run = store.one("SELECT run_id FROM sessions WHERE id = ?", (sid,))["run_id"]
    if run is not None:
        assert control.overrides(store, run_id=run) == listed


def test_a_confirmation_is_listed_as_one(runtime):
    store = runtime.store
    sid = run_to_end(runtime, target="fake-a", turns=2)
    judged = store.one("SELECT v.met FROM verdicts v JOIN turns t ON t.id = v.turn_id WHERE t.session_id = ? "
                       "AND t.idx = 0 AND v.cid = 'c1' AND v.source != 'human'", (sid,))["met"]
    control.override_verdict(store, sid, 0, "c1", bool(judged), "confirmed by the evaluator", who="ana")
    [entry] = control.overrides(store, session_id=sid)
    assert entry["action"] == "confirm"


def test_the_evaluator_name():
    assert control.evaluator_name("  Dr. Ana  ") == "Dr. Ana"
    import getpass

    assert control.evaluator_name(None) == getpass.getuser()


def test_steering_a_finished_session_is_refused_not_stored(runtime):
    store = runtime.store
    sid = run_to_end(runtime, target="fake-a", turns=2)
    assert store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "finished"
    count = store.one("SELECT COUNT(*) AS n FROM events WHERE session_id = ?", (sid,))["n"]
    with pytest.raises(control.ControlError, match="has finished: a written question would never be applied"):
        control.inject(store, sid, "What about vaccines?")
    with pytest.raises(control.ControlError, match="a forced action"):
        control.force(store, sid, "follow-up")
    with pytest.raises(control.ControlError, match="a pause"):
        control.pause(store, sid)
    assert store.one("SELECT COUNT(*) AS n FROM events WHERE session_id = ?", (sid,))["n"] == count
    assert control.refusal("running", "inject") is None and control.refusal("finished", "rubric") is None
