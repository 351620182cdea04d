"""The app's pure parts: the event fold (against the store the engine wrote), replay steps, the
rubric editor's draft (undo/redo, diff) and the session filter."""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.bench.model import BenchError
from engine.bench.rubric import current_rubric, list_versions
from engine.interview.control import override_verdict
from engine.interview.queries import session_detail
from tests.tui.conftest import run_to_end
from tui.editing import RubricDraft, diff_criteria, next_cid_number
from tui.filters import FilterError, compile_filter
from tui.state import SessionState, replay_steps, state_at


def fold(runtime, sid: int) -> SessionState:
    engine = Engine(runtime)
    row, criteria, labels = engine.session_view_inputs(sid)
    state = SessionState(sid, row, criteria)
    state.version_labels = labels
    state.apply_all(engine.events(sid))
    return state


def test_the_fold_of_the_events_matches_the_store(runtime):
    sid = run_to_end(runtime, turns=3)
    override_verdict(runtime.store, sid, 1, "c1", False, "no")
    state = fold(runtime, sid)
    detail = session_detail(runtime.store, sid)
    assert state.status == detail["session"]["status"] == "finished"
    assert [t.question for t in state.turns] == [t["question"] for t in detail["turns"]]
    assert [t.answer for t in state.turns] == [t["answer"] for t in detail["turns"]]
    assert [t.score for t in state.turns] == [t["score"] for t in detail["turns"]]
    assert [t.action for t in state.turns] == [t["action"] for t in detail["turns"]]
    for turn, row in zip(state.turns, detail["turns"], strict=True):
        assert {c: v.met for c, v in turn.verdicts.items()} == {c: bool(v["met"]) for c, v in row["verdicts"].items()}
    overridden = state.turns[1].verdicts["c1"]
    assert overridden.overridden and overridden.original is not None
    assert overridden.original.met == bool(detail["turns"][1]["verdicts"]["c1"]["original"]["met"])
    assert state.metrics["score"] == detail["session"]["score"]
    assert state.version_label(state.turns[0].rubric_version_id) == "v1"


def test_streamed_pieces_and_resets():
    state = SessionState(1)
    state.apply(1, "turn.started", {"turn": 0, "question": "Q?", "action": "initial", "actor": "item"})
    state.apply(2, "answer.delta", {"turn": 0, "text": "Hel"})
    state.apply(3, "answer.reset", {"turn": 0})
    state.apply_stream(4, 0, "Hello wor")
    assert state.turns[0].answer == "Hello wor" and state.turns[0].streaming
    state.apply(5, "answer.done", {"turn": 0, "answer": "Hello world", "latency_ms": 5.0, "tokens_in": 1,
                                   "tokens_out": 2})
    state.apply_stream(6, 0, "stale")
    assert state.turns[0].answer == "Hello world" and not state.turns[0].streaming


def test_controls_stay_pending_until_acknowledged():
    state = SessionState(1, {"status": "running"})
    state.apply(10, "control.force", {"action": "challenge"})
    state.apply(11, "control.inject", {"question": "Mine?"})
    assert state.pending_kinds() == ["next: challenge", "next: your question"]
    state.apply(12, "intervention", {"control_seq": 10, "kind": "force"})
    assert state.pending_kinds() == ["next: your question"]


def test_replay_steps_and_state_at(runtime):
    sid = run_to_end(runtime, turns=2)
    override_verdict(runtime.store, sid, 0, "c2", True, "it said droplets")
    events = Engine(runtime).events(sid)
    steps = replay_steps(events)
    assert [s.label for s in steps] == ["turn 0 judged", "turn 1 judged", "override: c2 on turn 0 set to met"]
    row, criteria, labels = Engine(runtime).session_view_inputs(sid)
    first = state_at(sid, row, criteria, labels, events, steps[0].position)
    assert len(first.turns) == 1 and first.turns[0].judged and first.status == "replay"
    last = state_at(sid, row, criteria, labels, events, steps[-1].position)
    assert last.turns[0].verdicts["c2"].overridden and last.status == "finished"


def test_rubric_draft_undo_redo_and_diff(runtime):
    item = runtime.store.one("SELECT id FROM items")["id"]
    base = current_rubric(runtime.store, item)
    draft = RubricDraft(base, next_cid_number(list_versions(runtime.store, item)))
    assert draft.add("Mentions antiviral treatment", position=1) == "c5"
    draft.reweight("c2", 0.5)
    draft.toggle_deduction("c3")
    draft.move("c1", 3)
    draft.edit("c5", "Mentions antiviral drugs")
    assert [c.cid for c in draft.criteria] == ["c5", "c2", "c3", "c1", "c4"]
    lines = diff_criteria(base.criteria, draft.criteria)
    assert ("+", "c5 [point, w 1] Mentions antiviral drugs") in lines
    assert ("~", "c2 weight 2 -> 2.5") in lines
    assert ("~", "c3 kind point -> deduction") in lines
    assert [line for mark, line in lines if mark == ">"] == ["c1 moved to position 4"], "one move, not three"
    assert draft.undo() and draft.undo()
    assert draft.find("c5").text == "Mentions antiviral treatment"
    assert draft.redo() and draft.redo() and not draft.redo()
    draft.reweight("c4", -5)
    assert draft.find("c4").weight == 0.5, "a weight never goes below the minimum"
    with pytest.raises(BenchError):
        draft.edit("c1", "   ")
    # Saving with the engine gives the previewed criteria exactly.
    from engine.bench.rubric import edit_rubric

    saved = edit_rubric(runtime.store, item, draft.ops, author="human", base_version_id=base.id)
    assert [(c.cid, c.kind, c.weight, c.text) for c in saved.criteria] == \
        [(c.cid, c.kind, c.weight, c.text) for c in draft.criteria]
    # The engine has the last word on a whole rubric: deductions alone are refused at save.
    draft = RubricDraft(saved, next_cid_number(list_versions(runtime.store, item)))
    for cid in ("c5", "c2", "c1"):
        draft.delete(cid)
    with pytest.raises(BenchError, match="at least one scoring point"):
        edit_rubric(runtime.store, item, draft.ops, author="human", base_version_id=saved.id)


def test_session_filter():
    rows = [
        {"id": 1, "target": "openai:gpt-4o@https://x", "benchmark": "medqa", "item": 3, "status": "finished",
         "score": 80.0, "created_at": "2025-11-02T10:00:00", "policy": "onnx", "protocol": "adaptive"},
        {"id": 2, "target": "local", "benchmark": "flu", "item": 12, "status": "running", "score": None,
         "created_at": "2025-10-30T10:00:00", "policy": "threshold", "protocol": "adaptive"},
    ]

    def ids(query: str) -> list[int]:
        match = compile_filter(query)
        return [r["id"] for r in rows if match(r)]

    assert ids("") == [1, 2]
    assert ids("gpt-4o") == [1]
    assert ids("bench:flu status:running") == [2]
    assert ids("score>50") == [1] and ids("score<50") == []
    assert ids("date:2025-10") == [2]
    assert ids("item:1") == [] and ids("item:12") == [2]
    assert ids("openai:gpt-4o@https://x") == [1], "a target spec is a word, not a field"
    with pytest.raises(FilterError, match="unknown filter field 'colour'"):
        compile_filter("colour:red")
    with pytest.raises(FilterError, match="not a number"):
        compile_filter("score>abc")
    from engine.metrics.listing import FIELDS
    from tui.filters import _FIELDS

    assert set(_FIELDS) == set(FIELDS), "every field the engine parses has row columns in the app"
