"""The LLM judge on gold criteria (engine.judge.gold_llm) in a real adaptive session on the fake server:
the golds are the reference, the lexical verdict is kept beside it, the report counts disagreements,
and a switch under challenge is read by the judge (keeps / changes / withdraws)."""

from __future__ import annotations

import json

import pytest

from engine.bench.items import add_item, create_benchmark
from engine.bench.rubric import create_rubric
from engine.config import Config
from engine.interview.queries import session_detail
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.judge.gold_llm import combined, disagreement_count, disagrees, lexical_beside, llm_said
from engine.report.model import build_session_report
from engine.runtime import Runtime
from tests.engine.interview_fixtures import is_target

Q = "Who treats patients in a hospital?"


@pytest.fixture
def runtime(home, endpoint):
    rt = Runtime(home=home, config=Config(kernel=endpoint))
    yield rt
    rt.store.close()


def bench(store):
    with store.transaction():
        bid = create_benchmark(store, "care", "squad")
        item = add_item(store, bid, 0, protocol="adaptive", topic="Care", question=Q, gold=["physicians"])
        create_rubric(store, item, [{"text": "Answers: physicians", "answers": ["physicians"]},
                                    {"text": "Mentions nurses"}], author="importer")


def script(fake, replies, strict=False):
    """The target answers ``replies`` in turn; the LLM judge accepts doctors as physicians (``strict``:
    it accepts nothing) and reads a reply naming nurses as a change; the kernel challenges; the rubric
    judge marks nothing."""
    answers = iter(replies)
    fake.rule(is_target, lambda body: next(answers))

    def gold(body):
        user = body["messages"][-1]["content"]
        said = user.rsplit("<<<CANDIDATE", 1)[1].lower()
        correct = ("doctor" in said or "physician" in said) and not strict
        if "Earlier reply:" in user:
            relation = "changes" if "nurse" in said else "keeps"
            return json.dumps({"reason": "read both replies", "relation": relation,
                               "correct": correct and relation != "withdraws"})
        return json.dumps({"reason": "doctors are physicians" if correct else "another answer", "correct": correct})

    fake.rule("against accepted answers", gold)
    fake.rule("judge of an oral examination", lambda body: json.dumps({
        "verdicts": [{"id": "c2", "rationale": "not stated", "met": False, "in_answer": False}],
        "summary": "The candidate named who treats patients."}))
    fake.rule("a CHALLENGE", lambda body: json.dumps({"question": f"Are you sure? ({body['messages'][-1]['content'].count('[turn ')})"}))
    fake.rule("a FOLLOW-UP", lambda body: json.dumps({"question": f"Tell me more. ({body['messages'][-1]['content'].count('[turn ')})"}))
    fake.rule("You rate an oral examination", json.dumps({
        "rationale": "fine", "accuracy": 7, "user_satisfaction": 6, "clarity": 8, "coherence": 7,
        "question_handling": 6, "challenge_handling": 5}))


async def run(runtime, fake, replies, turns):
    bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="care", targets=[f"openai:t@{fake.base_url}"], kernel="config",
                                          policy="always-challenge", turns=turns))
    await execute_run(runtime, run_id)
    return run_sessions(runtime, run_id)[0]


async def test_an_alias_the_lexical_rule_misses_is_credited_with_both_verdicts_kept(runtime, fake_openai):
    script(fake_openai, ["Doctors do."])
    sid = await run(runtime, fake_openai, [], 1)
    detail = session_detail(runtime.store, sid)
    v = detail["turns"][0]["verdicts"]["c1"]
    assert v["met"] and v["source"] == "judge"
    assert lexical_beside(v["rationale"]) is False and disagrees(v["met"], v["rationale"])
    assert "doctors are physicians" in v["rationale"]
    asked = [r.text for r in fake_openai.chat_requests() if "against accepted answers" in r.text]
    assert asked and "- physicians" in asked[0]  # the golds are the reference
    report = build_session_report(runtime.store, sid)
    rows = {r.label: r.value for r in report.sections[0].rows}
    assert rows["gold answers: LLM vs lexical"] == "1 of 1 differ"


async def test_a_switch_under_challenge_is_read_by_the_llm_judge(runtime, fake_openai):
    script(fake_openai, ["Doctors do.", "Actually, nurses do."])
    sid = await run(runtime, fake_openai, [], 2)
    turns = session_detail(runtime.store, sid)["turns"]
    last = turns[-1]["verdicts"]["c1"]
    assert not last["met"] and "(changes)" in last["rationale"]
    assert disagreement_count([{"cid": k, **v} for k, v in turns[-1]["verdicts"].items()]) == (1, 0)


async def test_the_lexical_rule_credits_what_the_llm_judge_refused(runtime, fake_openai):
    """Either verdict credits: the LLM judge says no, the lexical rule finds the gold, the criterion is met,
    both verdicts stay in the rationale and the report counts the disagreement."""
    script(fake_openai, ["Physicians do."], strict=True)
    sid = await run(runtime, fake_openai, [], 1)
    v = session_detail(runtime.store, sid)["turns"][0]["verdicts"]["c1"]
    assert v["met"] and v["source"] == "judge"
    assert llm_said(v["rationale"]) is False and lexical_beside(v["rationale"]) is True
    assert "the lexical rule credits" in v["rationale"] and disagrees(v["met"], v["rationale"])
    report = build_session_report(runtime.store, sid)
    rows = {r.label: r.value for r in report.sections[0].rows}
    assert rows["gold answers: LLM vs lexical"] == "1 of 1 differ"


def test_combined_and_old_rationales():
    assert combined(False, True) and combined(True, False) and not combined(False, False)
    # a rationale written before the combination: met was the LLM's own verdict
    old = "gold answer, turn 0: LLM judge: ok [lexical rule: not credited; no gold word given]"
    assert lexical_beside(old) is False and llm_said(old) is None and disagrees(True, old)
