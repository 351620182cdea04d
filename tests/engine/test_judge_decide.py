"""engine.judge.decide: the one table of which judge serves what, and the entry point every caller uses."""

from __future__ import annotations

import asyncio
import json

import pytest

from engine.bench.model import Criterion
from engine.judge import decide
from engine.judge.decide import (
    CHOICE,
    CRITERION_LLM,
    CRITERION_OFFLINE,
    GOLD_LEXICAL,
    GOLD_LLM,
    JUDGES,
    RUBRIC_ESTIMATE,
    RUBRIC_LLM,
    TASK_CODE,
    TASK_LLM,
    TASK_OFFLINE,
    ItemToJudge,
    TurnToJudge,
    gold_row,
    judge_turn,
    rate,
    route,
)
from engine.judge.llm import LLMJudge
from engine.judge.offline import OfflineJudge
from engine.llm import LLMClient

GOLD = Criterion("g", 0, "gold answer", answers=["Paris"])
CHOICE_GOLD = Criterion("m", 1, "gold option", answers=["B"])
FACT = Criterion("c", 2, "Paris is on the Seine.")
CODE = Criterion("k", 3, "the file is written", kind="code", eval_code="def check(messages, data_dir): return True")


class _LLMish:
    """The configuration column only reads ``offline`` and ``client``."""

    offline = False
    client = object()
    repairs = 2
    facts = None


def test_the_table_routes_every_criterion_kind_and_configuration():
    offline, llm = OfflineJudge(), _LLMish()
    free, mc = ItemToJudge("Capital of France?"), ItemToJudge("Capital?", options={"A": "Rome", "B": "Paris"})
    assert route(GOLD, free, offline) is GOLD_LEXICAL
    assert route(GOLD, free, llm) is GOLD_LLM
    assert route(CHOICE_GOLD, mc, offline) is CHOICE and route(CHOICE_GOLD, mc, llm) is CHOICE
    assert route(FACT, free, offline) is CRITERION_OFFLINE and route(FACT, free, llm) is CRITERION_LLM
    assert route(None, free, offline, kind="rubric") is RUBRIC_ESTIMATE
    assert route(None, free, llm, kind="rubric") is RUBRIC_LLM
    assert route(CODE, None, offline, kind="task") is TASK_CODE and route(CODE, None, llm, kind="task") is TASK_CODE
    assert route(FACT, None, offline, kind="task") is TASK_OFFLINE and route(FACT, None, llm, kind="task") is TASK_LLM
    with pytest.raises(ValueError, match="unknown kind"):
        route(FACT, free, offline, kind="essay")
    # every row of the table is reachable, each named once, and the docs draw the same table
    assert len({r.name for r in JUDGES}) == len(JUDGES) == 10
    for r in JUDGES:
        assert r.name in decide.__doc__


def test_an_offline_turn_judges_gold_and_other_criteria_and_writes_the_summary():
    turn = TurnToJudge(0, "What is the capital of France?", "It is Paris, on the Seine.", "initial",
                       ItemToJudge("What is the capital of France?"), (GOLD, FACT))
    judgement = asyncio.run(judge_turn(OfflineJudge(), turn))
    assert list(judgement.verdicts) == ["g", "c"]  # the criteria's order
    assert judgement.verdicts["g"].met and judgement.verdicts["g"].source == "gold"
    assert judgement.verdicts["c"].source == "offline"
    assert "Paris" in judgement.summary
    wrong = asyncio.run(judge_turn(OfflineJudge(), TurnToJudge(
        0, turn.question, "It is Lyon.", "initial", turn.item, (GOLD,), running_summary=False)))
    assert not wrong.verdicts["g"].met and wrong.summary == ""


def test_a_gold_row_is_a_one_turn_session_on_a_one_question_item():
    judged = asyncio.run(decide.gold_rows_verdicts(OfflineJudge(), [
        ("Who wrote Hamlet?", ("Shakespeare",), "William Shakespeare wrote it."),
        ("Who wrote Hamlet?", ("Shakespeare",), "Marlowe, I think."),
        ("Who wrote Hamlet?", ("Shakespeare",), "Not Shakespeare, that much I know."),
    ]))
    assert [v.met for v in judged] == [True, False, False]
    assert gold_row("q", ["a"], "x").criteria[0].answers == ["a"]


def test_the_offline_judge_is_not_asked_to_rate():
    out = asyncio.run(rate(OfflineJudge(), [("q", "a", "initial")], "topic"))
    assert out.ratings == {} and out.note == decide.NOT_RATED_OFFLINE and out.usage is None
    with pytest.raises(NotImplementedError, match="LLM judge"):
        asyncio.run(OfflineJudge().rate([("q", "a", "initial")]))


def test_an_llm_judge_turn_sends_gold_and_criterion_calls_at_once(store, endpoint, fake_openai):
    """Through a real HTTP server: the gold LLM call and the criterion judge's call go out together, and the
    gold verdict is the LLM's combined with the lexical rule's (as sessions record it)."""
    def answer(body):
        text = "\n".join(m["content"] for m in body["messages"])
        if "Accepted answers:" in text:
            return json.dumps({"reason": "names the capital", "correct": True})
        return json.dumps({"verdicts": {"c": {"met": True, "rationale": "says the river"}},
                           "summary": "Paris, on the Seine."})

    fake_openai.rule(lambda req: True, answer)
    client = LLMClient(store, endpoint, "judge", use_cache=False)
    turn = TurnToJudge(0, "What is the capital of France?", "Paris, on the Seine.", "initial",
                       ItemToJudge("What is the capital of France?"), (GOLD, FACT))
    judgement = asyncio.run(judge_turn(LLMJudge(client), turn, memo={}))
    assert judgement.verdicts["g"].met and "[LLM judge: credited; lexical rule: credited" in judgement.verdicts["g"].rationale
    assert judgement.usage.calls >= 2
    assert fake_openai.count() == 2
