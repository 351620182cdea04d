"""The interview engine end to end against the fake server (real client, real SQLite, real ONNX)."""

from __future__ import annotations

import asyncio
import json

import pytest

from engine.config import Config
from engine.interview import control
from engine.interview.queries import session_detail
from engine.interview.run import RunRequest, execute_run, plan_run, rescore_session, run_sessions
from engine.metrics.sessions import agreement, target_table
from engine.runtime import Runtime
from engine.store import loads
from tests.engine.interview_fixtures import (
    RATINGS,
    make_bench,
    make_task_bench,
    script_llm_kernel,
    script_target_only,
)


@pytest.fixture
def runtime(home, endpoint):
    rt = Runtime(home=home, config=Config(kernel=endpoint))
    yield rt
    rt.store.close()


def target_of(fake) -> str:
    return f"openai:fake-target@{fake.base_url}"


def kinds(store, sid):
    return [e.kind for e in store.events(0, sid)]


async def test_full_adaptive_session_stores_every_field_and_event(runtime, fake_openai):
    script_llm_kernel(fake_openai)
    item = make_bench(runtime.store)[0]
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[target_of(fake_openai)], kernel="config",
                                          policy="threshold", turns=6))
    errors = await execute_run(runtime, run_id)
    assert errors == {run_sessions(runtime, run_id)[0]: None}
    sid = run_sessions(runtime, run_id)[0]
    detail = session_detail(runtime.store, sid)
    session, turns = detail["session"], detail["turns"]
    assert session["status"] == "finished" and session["item_id"] == item
    assert [t["idx"] for t in turns] == list(range(6))
    assert turns[0]["action"] == "initial" and turns[0]["actor"] == "item"
    for prev, t in zip(turns, turns[1:], strict=False):
        # the policy's turns, and the examiner's pressure test near the end when the policy challenged nothing
        assert t["action"] in ("follow-up", "challenge") and t["actor"] in ("policy", "kernel")
        state, probs = loads(t["state"]), loads(t["probs"])
        assert len(state) == 7 and abs(sum(probs) - 1) < 1e-6
        assert t["delta"] == pytest.approx(t["score"] - prev["score"])
        assert t["cos"] is not None and -1 <= t["cos"] <= 1
        if t["actor"] == "kernel":  # the pressure test, or the last turn's follow-up after a held test
            assert t["idx"] >= len(turns) - 2 and (t["action"] == "challenge" or t["idx"] == len(turns) - 1)
            continue
        # threshold policy: challenge iff the previous turn did not gain
        assert (t["action"] == "challenge") == (prev["delta"] is not None and prev["delta"] <= 0)
    for t in turns:
        assert t["answer"] and t["summary"] and t["latency_ms"] is not None
        assert t["tokens_in"] > 0 and t["tokens_out"] > 0
        assert set(t["verdicts"]) == {"c1", "c2", "c3", "c4"}
    # scores follow the scripted answers: c1 (w2) of 4 points, then + c2 ...
    assert turns[0]["score"] == pytest.approx(0.5)
    assert turns[1]["score"] == pytest.approx(0.75)
    assert session["score"] == pytest.approx(100 * turns[-1]["score"])
    ks = kinds(runtime.store, sid)
    assert ks[0] == "session.started" and ks[-1] == "session.finished"
    assert ks.count("turn.started") == 6 and ks.count("answer.done") == 6 and ks.count("verdicts") == 6
    assert ks.count("policy.decided") == 5
    # at most 2 kernel/judge calls per adaptive turn: 6 judge calls + 5 question calls; then one
    # rating call for the whole conversation (Professionalism and Stability)
    kernel_calls = [r for r in fake_openai.chat_requests() if not r.body.get("stream")]
    assert len(kernel_calls) == 12
    rated = [e.payload for e in runtime.store.events(0, sid) if e.kind == "session.rated"]
    assert rated == [{"ratings": {k: v for k, v in RATINGS.items() if k != "rationale"},
                      "rationale": RATINGS["rationale"], "note": ""}]
    from engine.metrics.sessions import ratings_table

    fig = ratings_table(runtime.store, [sid])[session["target"]]
    assert fig["professionalism"] == pytest.approx(8.0) and fig["stability"] == pytest.approx(19 / 3)
    assert len([r for r in fake_openai.chat_requests() if r.body.get("stream")]) == 6


async def test_deduction_and_retraction_under_challenge(runtime, fake_openai):
    script_llm_kernel(fake_openai)
    make_bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[target_of(fake_openai)], kernel="config",
                                          policy="always-challenge", turns=6))
    await execute_run(runtime, run_id)
    turns = session_detail(runtime.store, run_sessions(runtime, run_id)[0])["turns"]
    # turn 4 asserts "noble gas" (deduction applies), turn 5 retracts it
    assert turns[4]["verdicts"]["c4"]["met"] == 1
    assert turns[5]["verdicts"]["c4"]["met"] == 0
    assert turns[5]["delta"] > 0


async def test_judge_with_unknown_criterion_is_reasked_then_costs_the_turn(runtime, fake_openai):
    """A judge reply still unusable after its repairs costs that turn ("cannot judge": no score, counted,
    shown), never the session (issue 23)."""
    script_target_only(fake_openai)
    fake_openai.rule("judge of an oral examination", json.dumps(
        {"verdicts": [{"id": "c99", "met": True}], "summary": "s"}))
    fake_openai.rule("a FOLLOW-UP|a CHALLENGE", lambda body: json.dumps({"question": "What else? (1)"}))
    fake_openai.rule("You rate an oral examination", json.dumps(RATINGS))
    make_bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[target_of(fake_openai)], kernel="config",
                                          policy="threshold", turns=2))
    errors = await execute_run(runtime, run_id)
    (sid, error), = errors.items()
    assert error is None
    row = runtime.store.one("SELECT status, error, score FROM sessions WHERE id = ?", (sid,))
    assert row["status"] == "finished" and row["score"] is None
    turns = runtime.store.query("SELECT idx, score, meta FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
    assert [t["score"] for t in turns] == [None, None]
    assert all(json.loads(t["meta"])["judge"] == "cannot judge" for t in turns)
    notes = [e.payload for e in runtime.store.events(0, sid) if e.kind == "session.note"]
    # the second unusable judgement in a row, repairs included, gives the judge's repairs up for the session
    assert [(n["turn"], n["what"]) for n in notes] == [(0, "cannot-judge"), (1, "repairs-given-up"), (1, "cannot-judge")]
    assert "unknown criterion ids ['c99']" in notes[0]["text"] and "missing verdicts" in notes[0]["text"]
    judge_calls = [r for r in fake_openai.chat_requests() if "judge of an oral" in r.text]
    assert len(judge_calls) == 4  # per turn: the first answer and 1 repair, answered alike (so no second)
    [row] = target_table(runtime.store, [sid])  # counted in the per-target figures, not hidden
    assert row["cannot_judge_turns"] == 2 and row["not_examined"] == [] and row["score"] is None


async def test_offline_kernel_session(runtime, fake_openai):
    script_target_only(fake_openai)
    make_bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[target_of(fake_openai)], kernel="offline",
                                          policy="threshold", turns=4))
    await execute_run(runtime, run_id)
    detail = session_detail(runtime.store, run_sessions(runtime, run_id)[0])
    turns = detail["turns"]
    assert detail["session"]["status"] == "finished" and len(turns) == 4
    assert turns[0]["verdicts"]["c1"]["met"] == 1 and turns[0]["verdicts"]["c1"]["source"] == "offline"
    assert turns[0]["verdicts"]["c3"]["met"] == 0
    assert "recall 1.00" in turns[0]["verdicts"]["c1"]["rationale"]  # the rule's figures are on record
    follow = next(t for t in turns if t["action"] == "follow-up")
    assert follow["question"].startswith(("What", "In connection with", "Complete this statement"))
    # the offline follow-up asks about a subject, never states the criterion's content
    assert "photosynthesis" not in follow["question"].lower()
    assert all(r.body.get("stream") for r in fake_openai.chat_requests())  # only target calls


async def test_interventions_force_inject_pause(runtime, fake_openai):
    script_target_only(fake_openai)
    make_bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[target_of(fake_openai)], kernel="offline",
                                          policy="always-follow-up", turns=4))
    sid = run_sessions(runtime, run_id)[0]
    control.force(runtime.store, sid, "challenge")
    control.pause(runtime.store, sid)

    async def resume_when_paused():
        async for event in runtime.store.subscribe(0, sid, interval=0.02):
            if event.kind == "session.paused":
                assert runtime.store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "paused"
                control.inject(runtime.store, sid, "What colour is liquid oxygen?")
                control.resume(runtime.store, sid)
                return

    await asyncio.gather(execute_run(runtime, run_id), asyncio.wait_for(resume_when_paused(), 60))
    turns = session_detail(runtime.store, sid)["turns"]
    # both kept, in the order asked (issue 25): the forced challenge, then the written question
    assert (turns[1]["action"], turns[1]["actor"]) == ("challenge", "human")
    assert (turns[2]["action"], turns[2]["actor"]) == ("human", "human")
    assert turns[2]["question"] == "What colour is liquid oxygen?"
    ks = kinds(runtime.store, sid)
    assert "session.paused" in ks and ks.count("intervention") == 4


async def test_force_end_and_override_and_rescore_without_target_calls(runtime, fake_openai):
    script_llm_kernel(fake_openai)
    item = make_bench(runtime.store)[0]
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[target_of(fake_openai)], kernel="config",
                                          policy="always-follow-up", turns=6))
    sid = run_sessions(runtime, run_id)[0]
    control.force(runtime.store, sid, "challenge")
    await execute_run(runtime, run_id)
    turns = session_detail(runtime.store, sid)["turns"]
    assert (turns[1]["action"], turns[1]["actor"]) == ("challenge", "human")
    assert all(t["actor"] == "policy" for t in turns[2:])

    before = runtime.store.one("SELECT score FROM sessions WHERE id = ?", (sid,))["score"]
    last = turns[-1]["idx"]
    result = control.override_verdict(runtime.store, sid, last, "c3", not turns[-1]["verdicts"]["c3"]["met"],
                                      note="evaluator disagrees")
    after = runtime.store.one("SELECT score FROM sessions WHERE id = ?", (sid,))["score"]
    assert after != before and after == pytest.approx(result["session_score"])
    verdicts = runtime.store.query(
        "SELECT source FROM verdicts v JOIN turns t ON t.id = v.turn_id WHERE t.session_id = ? AND t.idx = ? "
        "AND v.cid = 'c3' ORDER BY v.id", (sid, last))
    assert [v["source"] for v in verdicts] == ["judge", "human"]  # the judge's verdict stays on record
    assert agreement(runtime.store)["reviewed"] == 1

    from engine.bench.rubric import Delete, edit_rubric

    version = edit_rubric(runtime.store, item, [Delete("c3")], author="human")
    targets_before = len([r for r in fake_openai.chat_requests() if r.body.get("stream")])
    judges_before = len([r for r in fake_openai.chat_requests() if "judge of an oral" in r.text])
    metrics = await rescore_session(runtime, sid, version.id)
    assert len([r for r in fake_openai.chat_requests() if r.body.get("stream")]) == targets_before
    assert len([r for r in fake_openai.chat_requests() if "judge of an oral" in r.text]) == judges_before + 6
    rescored = session_detail(runtime.store, sid)["turns"]
    assert all(t["rubric_version_id"] == version.id and "c3" not in t["verdicts"] for t in rescored)
    assert metrics["scores"][-1] == pytest.approx(rescored[-1]["score"])


async def test_activated_static_followups_come_from_the_dataset(runtime, fake_openai):
    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric

    script_target_only(fake_openai)
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "sq", "squad")
        item = add_item(runtime.store, bid, 0, protocol="adaptive", topic="Oxygen",
                        question="What is the most abundant element in the crust?", gold=["oxygen"],
                        meta={"followups": [{"question": "What colour is liquid oxygen?", "answers": ["pale blue"]},
                                            {"question": "Which process of plants releases it?",
                                             "answers": ["photosynthesis"]}]})
        create_rubric(runtime.store, item, [{"text": "Answers with oxygen"}, {"text": "Answers pale blue"},
                                            {"text": "Answers photosynthesis"}], author="importer")
    run_id = plan_run(runtime, RunRequest(bench="sq", targets=[target_of(fake_openai)], kernel="offline",
                                          policy="always-follow-up", turns=4))
    await execute_run(runtime, run_id)
    questions = [t["question"] for t in session_detail(runtime.store, run_sessions(runtime, run_id)[0])["turns"]]
    assert questions[1:3] == ["What colour is liquid oxygen?", "Which process of plants releases it?"]
    # every question of the item asked: the session ends instead of asking the kernel for more
    assert len(questions) == 3
    ended = [e.payload for e in runtime.store.events(0, run_sessions(runtime, run_id)[0])
             if e.kind == "session.ended_early"]
    assert ended == [{"after_turn": 2, "reason": "questions-exhausted"}]


async def test_cache_makes_a_rerun_free(runtime, fake_openai):
    script_llm_kernel(fake_openai)
    make_bench(runtime.store)
    first = plan_run(runtime, RunRequest(bench="oxy", targets=[target_of(fake_openai)], kernel="config",
                                         policy="threshold", turns=3))
    await execute_run(runtime, first)
    calls = fake_openai.count()
    second = plan_run(runtime, RunRequest(bench="oxy", targets=[target_of(fake_openai)], kernel="config",
                                          policy="threshold", turns=3))
    await execute_run(runtime, second)
    assert fake_openai.count() == calls
    a, b = (session_detail(runtime.store, run_sessions(runtime, r)[0])["turns"] for r in (first, second))
    assert [t["score"] for t in a] == [t["score"] for t in b]


async def test_two_targets_three_items_concurrently(runtime, fake_openai):
    script_target_only(fake_openai, delay=0.05)
    make_bench(runtime.store, n_items=3)
    targets = [target_of(fake_openai), f"openai:other-target@{fake_openai.base_url}"]
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=targets, kernel="offline", policy="threshold",
                                          turns=3, concurrency=4))
    errors = await execute_run(runtime, run_id)
    assert len(errors) == 6 and not any(errors.values())
    from engine.metrics.sessions import target_table

    table = target_table(runtime.store, run_sessions(runtime, run_id))
    assert sorted(r["target"] for r in table) == sorted(targets)
    assert all(len(r["sessions"]) == 3 and r["score"] is not None for r in table)
    # The sessions overlapped: a request arrived while another was still being answered (each
    # answer takes the fake server's delay), i.e. more than one was in flight at some point.
    assert fake_openai.max_in_flight >= 2


async def test_task_session_with_eval_code_and_judged_point(runtime, fake_openai):
    fake_openai.rule(lambda r: bool(r.body.get("stream")), "Hello World")
    examiner_turns = iter(["Please repeat the words Hello World exactly.", "TASK_FINISHED"])
    fake_openai.rule("act as an examiner", lambda body: next(examiner_turns))
    fake_openai.rule("judge of an agent's task", json.dumps({"reason": "it repeated it", "is_hit": True}))
    make_task_bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="echo", targets=[target_of(fake_openai)], kernel="config"))
    errors = await execute_run(runtime, run_id)
    assert not any(errors.values()), errors
    detail = session_detail(runtime.store, run_sessions(runtime, run_id)[0])
    assert detail["session"]["protocol"] == "task" and len(detail["turns"]) == 1
    verdicts = detail["turns"][0]["verdicts"]
    assert verdicts["c1"]["source"] == "code" and verdicts["c1"]["met"] == 1
    assert verdicts["c2"]["source"] == "judge" and verdicts["c2"]["met"] == 1
    assert detail["session"]["score"] == pytest.approx(100.0)
    assert "task.stop_keyword" in kinds(runtime.store, detail["session"]["id"])


async def test_task_eval_code_miss_gives_partial_score(runtime, fake_openai):
    fake_openai.rule(lambda r: bool(r.body.get("stream")), "hello world!")
    examiner_turns = iter(["Please repeat the words Hello World exactly.", "TASK_FINISHED"])
    fake_openai.rule("act as an examiner", lambda body: next(examiner_turns))
    fake_openai.rule("judge of an agent's task", json.dumps({"reason": "close enough", "is_hit": True}))
    make_task_bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="echo", targets=[target_of(fake_openai)], kernel="config"))
    await execute_run(runtime, run_id)
    detail = session_detail(runtime.store, run_sessions(runtime, run_id)[0])
    c1 = detail["turns"][0]["verdicts"]["c1"]
    assert c1["met"] == 0 and "got 'hello world!'" in c1["rationale"]
    assert detail["session"]["score"] == pytest.approx(100 * 2 / 3)
