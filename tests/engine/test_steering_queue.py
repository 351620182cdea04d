"""Queued steering (issue 25, defect 5): a forced action and a written question are both kept, in
the order they were asked; a second request of the same kind replaces the first and says so."""

from __future__ import annotations

import pytest

from engine.interview import control
from engine.interview.run import run_sessions
from tests.tui.conftest import execute, make_benchmark, make_runtime, plan


@pytest.fixture
def runtime(home, fake_openai):
    rt = make_runtime(home, fake_openai)
    make_benchmark(rt)
    yield rt
    rt.store.close()


def _turns(rt, sid):
    return [(t["action"], t["actor"], t["question"]) for t in rt.store.query(
        "SELECT action, actor, question FROM turns WHERE session_id = ? ORDER BY idx", (sid,))]


def test_a_forced_action_and_a_written_question_are_both_asked_in_order(runtime):
    run = plan(runtime, turns=4, policy="always-follow-up")
    [sid] = run_sessions(runtime, run)
    control.force(runtime.store, sid, "challenge")
    control.inject(runtime.store, sid, "What would you tell a sceptic?")
    assert not any(execute(runtime, run).values())
    turns = _turns(runtime, sid)
    # before the fix the challenge was acknowledged and dropped: turn 1 was the question, never a challenge
    assert turns[1][:2] == ("challenge", "human")
    assert turns[2] == ("human", "human", "What would you tell a sceptic?")
    assert turns[3][:2] == ("follow-up", "policy")


def test_the_question_first_when_it_was_asked_first(runtime):
    run = plan(runtime, turns=3, policy="always-follow-up")
    [sid] = run_sessions(runtime, run)
    control.inject(runtime.store, sid, "And children?")
    control.force(runtime.store, sid, "challenge")
    assert not any(execute(runtime, run).values())
    turns = _turns(runtime, sid)
    assert turns[1] == ("human", "human", "And children?") and turns[2][:2] == ("challenge", "human")


def test_a_second_forced_action_replaces_the_first_on_record(runtime):
    run = plan(runtime, turns=3, policy="always-follow-up")
    [sid] = run_sessions(runtime, run)
    first = control.force(runtime.store, sid, "challenge")
    second = control.force(runtime.store, sid, "follow-up")
    assert not any(execute(runtime, run).values())
    turns = _turns(runtime, sid)
    assert turns[1][:2] == ("follow-up", "human") and turns[2][:2] == ("follow-up", "policy")
    from engine.store import loads

    acks = [loads(r["payload"], {}) for r in runtime.store.query(
        "SELECT payload FROM events WHERE session_id = ? AND kind = 'intervention'", (sid,))]
    assert any(a.get("control_seq") == first and (a.get("extra") or a).get("replaced_by") == second for a in acks), acks
