"""An override is a fact from its turn on (the rule: engine.events.overrides; the stored scores
recomputed under it: engine.metrics.overrides): an early-turn override checked
against a hand computation of every figure (issue 25, defect 4)."""

from __future__ import annotations

import pytest

from engine.events.overrides import TurnVerdicts, effective_verdicts_by_turn
from engine.interview.control import override_verdict
from engine.metrics.sessions import session_metrics
from tests.tui.conftest import make_benchmark, make_runtime, run_to_end


@pytest.fixture
def runtime(home, fake_openai):
    rt = make_runtime(home, fake_openai)
    make_benchmark(rt)
    yield rt
    rt.store.close()


def test_the_rule_on_its_own():
    turns = [TurnVerdicts(0, 1, {"c1": False}, {"c1": True}),  # overridden: met
             TurnVerdicts(1, 1, {"c1": False}),  # the judge says the same as on turn 0: carried
             TurnVerdicts(2, 1, {"c1": True}),  # the judge changed its mind: its verdict
             TurnVerdicts(3, 1, {"c1": False})]  # and the carry has ended
    got = effective_verdicts_by_turn(turns)
    assert [e.met["c1"] for e in got] == [True, True, True, False]
    assert got[1].carried == {"c1": 0} and got[2].carried == {} and got[3].carried == {}
    # another rubric version ends the carry
    other = effective_verdicts_by_turn([TurnVerdicts(0, 1, {"c1": False}, {"c1": True}),
                                        TurnVerdicts(1, 2, {"c1": False})])
    assert other[1].met["c1"] is False


def _judge_met(store, sid):
    rows = store.query("SELECT t.idx, v.cid, v.met FROM verdicts v JOIN turns t ON t.id = v.turn_id "
                       "WHERE t.session_id = ? AND v.source != 'human' ORDER BY v.id", (sid,))
    out: dict[int, dict[str, bool]] = {}
    for r in rows:
        out.setdefault(r["idx"], {})[r["cid"]] = bool(r["met"])
    return out


def test_an_early_override_against_a_hand_computation(runtime):
    store = runtime.store
    sid = run_to_end(runtime, target="fake-a", turns=4, policy="always-follow-up")
    judge = _judge_met(store, sid)
    actions = [r["action"] for r in store.query("SELECT action FROM turns WHERE session_id = ? ORDER BY idx", (sid,))]
    # the scripted target names vaccination (c3) only on turn 2: the judge marks it not met before
    assert [judge[i]["c3"] for i in range(4)] == [False, False, True, True]
    before = session_metrics(store, sid)

    override_verdict(store, sid, 0, "c3", True, "vaccination is implied")

    # by hand: weights c1 1, c2 2, c3 1 (4 in all), c4 a deduction; c3 met from turn 0 on
    def score(met):
        return max(0.0, (sum(w for c, w in (("c1", 1), ("c2", 2), ("c3", 1)) if met.get(c))
                         - (1 if met.get("c4") else 0)) / 4)

    hand_met = [{**judge[0], "c3": True}, {**judge[1], "c3": True}, judge[2], judge[3]]
    hand = [score(m) for m in hand_met]
    deltas = [None] + [hand[i] - hand[i - 1] for i in range(1, 4)]
    follow = [deltas[i] for i in range(1, 4) if actions[i] == "follow-up"]
    turns = store.query("SELECT score, delta FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
    assert [t["score"] for t in turns] == pytest.approx(hand)
    assert [t["delta"] for t in turns[1:]] == pytest.approx(deltas[1:])
    after = session_metrics(store, sid)
    assert after["score"] == pytest.approx(100 * hand[-1])
    assert after["delta_follow_up"] == pytest.approx(sum(follow) / len(follow))
    assert store.one("SELECT score FROM sessions WHERE id = ?", (sid,))["score"] == pytest.approx(100 * hand[-1])
    # before the fix turn 1 kept the judge's 'not met': its Δs fell by the override's gain (c3, 1/4)
    assert turns[1]["score"] >= turns[0]["score"] and deltas[1] == pytest.approx(hand[1] - hand[0])
    print("before", {k: before[k] for k in ("score", "delta_follow_up", "scores")})
    print("after", {k: after[k] for k in ("score", "delta_follow_up", "scores")})
