"""A session's turn is a type (:class:`engine.interview.session.Turn`), read by attribute: it has no mapping
view, and the turns a session reads, writes and hands its protocol's rules round-trip from the store."""

from __future__ import annotations

from dataclasses import fields

import pytest

from engine.config import Config
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.interview.session import Session, Turn
from engine.runtime import Runtime
from engine.store.texts import fill_summaries
from tests.engine.interview_fixtures import make_bench, script_target_only


@pytest.fixture
def runtime(home, endpoint):
    rt = Runtime(home=home, config=Config(kernel=endpoint))
    yield rt
    rt.store.close()


def test_a_turn_has_no_mapping_view():
    """A subscript, ``get``, ``keys``, ``in`` or ``{**turn}`` left anywhere fails loudly."""
    turn = Turn(id=1, session_id=2, idx=0, question="What colour is liquid oxygen?", score=0.5)
    assert turn.score == 0.5 and turn.question.startswith("What")
    with pytest.raises(TypeError):
        turn["score"]  # type: ignore[index]  # noqa: B018
    for name in ("get", "keys", "items", "values", "__getitem__", "__contains__", "__iter__"):
        assert not hasattr(turn, name), name
    with pytest.raises(TypeError):
        "score" in turn  # type: ignore[operator]  # noqa: B015
    with pytest.raises(TypeError):
        {**turn}  # type: ignore[dict-item]  # noqa: B018
    with pytest.raises(TypeError):
        dict(turn)  # type: ignore[call-overload]


async def test_a_sessions_turns_read_by_attribute_round_trip_from_the_store(runtime, fake_openai):
    """Every field of every turn a session reads (and of the turns its protocol's session rule is given)
    is the stored column, its summary read back from ``texts``; the copy the session keeps after its own
    writes reads the same."""
    script_target_only(fake_openai)
    make_bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[f"openai:fake-target@{fake_openai.base_url}"],
                                          kernel="offline", policy="threshold", turns=3))
    errors = await execute_run(runtime, run_id)
    assert not any(errors.values()), errors
    sid = run_sessions(runtime, run_id)[0]
    stored = fill_summaries(runtime.store, runtime.store.query(
        "SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (sid,)))
    session = Session(runtime.store, sid)
    turns = session.turns()
    assert len(turns) == len(stored) == 3 and all(isinstance(t, Turn) for t in turns)
    for turn, row in zip(turns, stored, strict=True):
        for f in fields(Turn):
            assert getattr(turn, f.name) == row[f.name], (turn.idx, f.name)
        assert session.turn(turn.id) == turn
    assert any(t.summary for t in turns) and all(t.answer for t in turns)

    # the session's own writes keep a copy equal to reading it back
    turn = session.add_turn(3, "And its boiling point?", "follow-up", "human")
    answered = session.record_answer(turn, "About 90 K.", 12.0, 3, 4, 0.0)
    assert (answered.answer, answered.tokens_in, answered.tokens_out) == ("About 90 K.", turn.tokens_in + 3,
                                                                          turn.tokens_out + 4)
    assert session.turns() == Session(runtime.store, sid).turns()

    # a protocol's session rule is given the turns as stored
    given: list[list[Turn]] = []
    session.update_score(lambda ts: given.append(ts) or None)
    assert [t.id for t in given[0]] == [t.id for t in session.turns()]
    assert all(isinstance(t, Turn) for t in given[0])
