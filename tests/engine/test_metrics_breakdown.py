"""Report breakdowns on hand-made sessions in a real store: criterion rates (effective verdicts),
the topic table and run totals."""

from __future__ import annotations

import pytest

from engine.bench.items import add_item, create_benchmark
from engine.bench.rubric import create_rubric, current_rubric, edit_rubric, get_version
from engine.metrics.breakdown import NO_TOPIC, criterion_rates, run_totals, topic_table
from engine.metrics.sessions import target_table
from engine.store.db import now_iso

CRITERIA = [{"text": "first point"}, {"text": "second point", "weight": 2},
            {"text": "a fault", "kind": "deduction"}]


def _criteria(store):
    """Rubric version id -> its criteria, as the callers above the metrics pass them."""
    return lambda v: get_version(store, v).criteria


def _items(store):
    with store.transaction():
        bench = create_benchmark(store, "b", "test")
        a = add_item(store, bench, 0, protocol="adaptive", topic="alpha", question="qa")
        b = add_item(store, bench, 1, protocol="adaptive", topic="", question="qb")
        create_rubric(store, a, CRITERIA, author="human")
        create_rubric(store, b, CRITERIA, author="human")
    return a, b


def _session(store, item, target, status, turns):
    """A session with turns ``[(action, score, delta, {cid: [(met, source), ...]}), ...]``; every
    verdict row in the given order (the last one per criterion is the effective one)."""
    version = current_rubric(store, item).id
    now = now_iso()
    judged = [t[1] for t in turns if t[1] is not None]
    score = 100.0 * judged[-1] if judged else None  # the adaptive rule: 100 × the last judged turn's score
    with store.transaction():
        sid = store.insert("sessions", {"item_id": item, "protocol": "adaptive", "target": target, "kernel": "offline",
                                        "status": status, "rubric_version_id": version, "score": score, "created_at": now,
                                        "updated_at": now})
        for idx, (action, score, delta, verdicts) in enumerate(turns):
            tid = store.insert("turns", {"session_id": sid, "idx": idx, "question": f"q{idx}", "answer": f"a{idx}",
                                         "action": action, "score": score, "delta": delta, "tokens_in": 10 + idx,
                                         "tokens_out": 2, "cost": 0.5, "rubric_version_id": version,
                                         "created_at": now})
            for cid, rows in verdicts.items():
                for met, source in rows:
                    store.insert("verdicts", {"turn_id": tid, "cid": cid, "rubric_version_id": version,
                                              "met": int(met), "source": source, "created_at": now})
    return sid


def test_criterion_rates_use_effective_verdicts(store):
    a, _ = _items(store)
    sid = _session(store, a, "t1", "finished", [
        ("initial", 0.0, None, {"c1": [(False, "judge"), (True, "human")], "c2": [(False, "judge")],
                                "c3": [(False, "judge")]}),
        ("follow-up", 0.5, 0.5, {"c1": [(True, "judge")], "c2": [(True, "judge")], "c3": [(True, "judge")]}),
        ("challenge", 1.0, 0.5, {"c1": [(True, "judge"), (False, "human")], "c2": [(True, "judge")]}),
        ("follow-up", None, None, {}),  # not judged: not counted
    ])
    rates = {r["cid"]: r for r in criterion_rates(store, sid, _criteria(store))}
    assert [r["cid"] for r in criterion_rates(store, sid, _criteria(store))] == ["c1", "c2", "c3"]
    assert (rates["c1"]["judged"], rates["c1"]["met"], rates["c1"]["final"], rates["c1"]["overridden"]) == (3, 2, False, 2)
    assert rates["c1"]["rate"] == pytest.approx(2 / 3)
    assert (rates["c2"]["met"], rates["c2"]["judged"], rates["c2"]["final"]) == (2, 3, True)
    assert (rates["c3"]["met"], rates["c3"]["judged"], rates["c3"]["final"]) == (1, 2, True)  # no verdict on turn 2
    assert rates["c3"]["kind"] == "deduction" and rates["c2"]["weight"] == 2


def test_criterion_rates_follow_the_sessions_rubric_version(store):
    a, _ = _items(store)
    sid = _session(store, a, "t1", "finished", [("initial", 1.0, None, {"c1": [(True, "judge")]})])
    v2 = edit_rubric(store, a, [{"op": "delete", "cid": "c3"}], author="human")
    rates = criterion_rates(store, sid, _criteria(store))
    assert [r["cid"] for r in rates] == ["c1", "c2", "c3"] and rates[0]["met"] == 1  # still on version 1
    store.update("sessions", sid, {"rubric_version_id": v2.id})
    rates = criterion_rates(store, sid, _criteria(store))
    assert [r["cid"] for r in rates] == ["c1", "c2"]
    assert all(r["judged"] == 0 and r["rate"] is None and r["final"] is None for r in rates)  # no turn on v2 yet
    assert criterion_rates(store, 999, _criteria(store)) == []


def test_topic_table_and_run_totals(store):
    a, b = _items(store)
    s1 = _session(store, a, "t1", "finished", [("initial", 0.5, None, {}), ("follow-up", 1.0, 0.5, {})])
    s2 = _session(store, a, "t2", "finished", [("initial", 0.25, None, {})])
    s3 = _session(store, b, "t1", "failed", [("initial", 0.0, None, {})])
    s4 = _session(store, b, "t1", "running", [("initial", 0.75, None, {})])
    rows = topic_table(store, [s1, s2, s3, s4])
    assert [(r["topic"], r["target"]) for r in rows] == [("alpha", "t1"), ("alpha", "t2"), (NO_TOPIC, "t1")]
    assert rows[0]["score"] == pytest.approx(100.0) and rows[1]["score"] == pytest.approx(25.0)
    assert rows[2]["score"] is None and rows[2]["failed"] == [s3] and rows[2]["unfinished"] == [s4]
    # each topic's row is exactly the target table over that topic's sessions
    assert {k: v for k, v in rows[0].items() if k != "topic"} == target_table(store, [s1])[0]
    totals = run_totals(store, [s1, s2, s3, s4])
    assert totals == {"sessions": 4, "finished": 2, "failed": 1, "not_examined": 0, "unfinished": 1, "targets": 2, "items": 2,
                      "tokens_in": 10 + 11 + 10 + 10 + 10, "tokens_out": 10, "cost": pytest.approx(2.5)}
    assert run_totals(store, []) ["sessions"] == 0 and topic_table(store, []) == []


def test_tokens_are_unknown_for_targets_with_uncounted_calls(store):
    """A call whose server sent no counts (``llm_calls.usage_unknown``) makes its target's tokens unknown in
    the per-target table and the leaderboard (the sums would undercount); other targets keep their sums."""
    from engine.metrics.leaderboard import leaderboard

    a, _ = _items(store)
    s1 = _session(store, a, "t1", "finished", [("initial", 0.5, None, {})])
    s2 = _session(store, a, "t2", "finished", [("initial", 0.25, None, {})])
    for sid, unknown in ((s1, 0), (s2, 1), (s2, 1)):
        store.insert("llm_calls", {"cache_key": "k", "role": "target", "base_url": "http://127.0.0.1:1/v1",
                                   "model": "m", "session_id": sid, "usage_unknown": unknown, "created_at": now_iso()})
    rows = {r["target"]: r for r in target_table(store, [s1, s2])}
    assert (rows["t1"]["tokens_in"], rows["t1"]["tokens_out"], rows["t1"].get("tokens_unknown")) == (10, 2, None)
    assert (rows["t2"]["tokens_in"], rows["t2"]["tokens_out"], rows["t2"]["tokens_unknown"]) == (None, None, 2)
    board = {r["target"]: r for r in leaderboard(store, [s1, s2])["rows"]}
    assert board["t1"]["tokens_in"] == 10 and "tokens_unknown" not in board["t1"]
    assert (board["t2"]["tokens_in"], board["t2"]["tokens_unknown"]) == (None, 2)
