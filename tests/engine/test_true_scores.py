"""Scores follow what the target knows: gold-answer criteria, multiple choice, windows, honest
task examining and offline question quality, through the real engine (fake server, real SQLite,
real ONNX embedder)."""

from __future__ import annotations

import pytest

from engine.bench.items import add_item, create_benchmark
from engine.bench.rubric import create_rubric
from engine.config import Config
from engine.interview.queries import session_detail
from engine.interview.run import RunError, RunRequest, execute_run, plan_run, run_sessions
from engine.runtime import Runtime

QUESTIONS = {
    "What is the most abundant element in the Earth's crust?": ("oxygen", "iron"),
    "What colour is liquid oxygen?": ("pale blue", "dark red"),
    "Which process of plants releases oxygen?": ("photosynthesis", "respiration"),
}
OPTIONS = {"A": "Iron", "B": "Oxygen", "C": "Silicon", "D": "Aluminium"}


@pytest.fixture
def runtime(home):
    rt = Runtime(home=home, config=Config())
    yield rt
    rt.close()


def squad_like(store) -> None:
    qs = list(QUESTIONS)
    with store.transaction():
        bid = create_benchmark(store, "sq", "squad")
        item = add_item(store, bid, 0, protocol="adaptive", topic="Oxygen", question=qs[0],
                        gold=[QUESTIONS[qs[0]][0]],
                        meta={"followups": [{"question": q, "answers": [QUESTIONS[q][0]]} for q in qs[1:]]})
        create_rubric(store, item, [{"text": f'Answers "{q}" with "{QUESTIONS[q][0]}"', "answers": [QUESTIONS[q][0]],
                                     "asks": q} for q in qs], author="importer")


def multiple_choice(store) -> None:
    with store.transaction():
        bid = create_benchmark(store, "mc", "medqa")
        item = add_item(store, bid, 0, protocol="graded", topic="chemistry",
                        question="Which element is the most abundant in the Earth's crust?",
                        options=OPTIONS, gold="B", reference="Oxygen")
        create_rubric(store, item, [{"text": "Chooses option B: Oxygen", "answers": ["B"]}], author="importer")


def answering(style: str, right: bool = True, unstable: bool = False):
    """A scripted target: answers each known question rightly or wrongly, in a style; under
    challenge it holds, or (unstable) abandons its answer with a retraction."""

    def reply(body) -> str:
        last = body["messages"][-1]["content"]
        if last.startswith(("I am not convinced", "The reference material says", "You said:", "Of everything you")):
            return "You are right, I was wrong. It is actually something else entirely." if unstable else \
                "Yes, I am sure."
        for q, (gold, wrong) in QUESTIONS.items():
            if q in last:
                a = gold if right else wrong
                return {"terse": a, "sentence": f"I believe the answer is {a}.",
                        "echo": f"{q} {q} That is a good question about {q.lower()}"}[style]
        if "A. Iron" in last:  # the options were shown
            return {"letter": "B" if right else "A", "negated": "It is not B. The answer is C.",
                    "all": "A, B, C or D."}[style]
        return "I don't know."
    return reply


RUNS = iter(range(10**6))


async def _run(runtime, fake, bench, reply, policy="always-follow-up", turns=3, protocol=None):
    fake.default = reply
    target = f"openai:t{next(RUNS)}@{fake.base_url}"  # a target of its own: no answer comes from the cache
    run_id = plan_run(runtime, RunRequest(bench=bench, targets=[target], kernel="offline",
                                          policy=policy, turns=turns, protocol=protocol))
    errors = await execute_run(runtime, run_id)
    assert not any(errors.values()), errors
    sid = run_sessions(runtime, run_id)[0]
    return session_detail(runtime.store, sid)


@pytest.mark.parametrize("style", ["terse", "sentence"])
async def test_gold_answers_score_what_the_target_knows(runtime, fake_openai, style):
    squad_like(runtime.store)
    right = await _run(runtime, fake_openai, "sq", answering(style, right=True))
    assert right["session"]["score"] == pytest.approx(100.0)
    assert [t["question"] for t in right["turns"]] == list(QUESTIONS)  # exactly the dataset's questions
    wrong = await _run(runtime, fake_openai, "sq", answering(style, right=False))
    assert wrong["session"]["score"] == pytest.approx(0.0)
    v = right["turns"][2]["verdicts"]["c3"]
    assert v["source"] == "gold" and v["met"] and "turn 2" in v["rationale"]


async def test_echoing_the_question_earns_nothing(runtime, fake_openai):
    squad_like(runtime.store)
    detail = await _run(runtime, fake_openai, "sq", answering("echo"))
    assert detail["session"]["score"] == pytest.approx(0.0)


async def test_a_retraction_under_challenge_replaces_the_answer(runtime, fake_openai):
    squad_like(runtime.store)
    steady = await _run(runtime, fake_openai, "sq", answering("terse"), policy="always-challenge")
    assert steady["turns"][1]["action"] == "challenge" and steady["session"]["score"] == pytest.approx(100 / 3)
    shaky = await _run(runtime, fake_openai, "sq", answering("terse", unstable=True), policy="always-challenge")
    assert shaky["turns"][0]["score"] == pytest.approx(1 / 3) and shaky["session"]["score"] == pytest.approx(0.0)
    assert shaky["turns"][1]["delta"] < 0  # the challenge revealed instability (R−)


async def test_multiple_choice_shows_options_and_reads_the_choice(runtime, fake_openai):
    multiple_choice(runtime.store)
    scores = {}
    for style, right in (("letter", True), ("letter", False), ("negated", True), ("all", True)):
        detail = await _run(runtime, fake_openai, "mc", answering(style, right), turns=1, protocol="adaptive")
        assert "A. Iron" in detail["turns"][0]["question"] and "D. Aluminium" in detail["turns"][0]["question"]
        scores[(style, right)] = detail["session"]["score"]
    assert scores == {("letter", True): 100.0, ("letter", False): 0.0, ("negated", True): 0.0, ("all", True): 0.0}


def test_an_item_runs_under_its_own_protocol_unless_another_is_asked_for():
    from engine.interview.protocols import protocol_for_item
    from engine.interview.session import SessionError

    assert protocol_for_item("graded", None) == "graded"
    assert protocol_for_item("graded", "adaptive") == "adaptive"
    with pytest.raises(SessionError, match="unknown protocol 'socratic' \\(available: adaptive, task, graded"):
        protocol_for_item("socratic", None)


async def test_follow_ups_on_multiple_choice_never_give_the_answer_away(runtime, fake_openai):
    multiple_choice(runtime.store)
    detail = await _run(runtime, fake_openai, "mc", answering("letter"), turns=3, protocol="adaptive")
    for t in detail["turns"][1:]:
        assert "Oxygen" not in t["question"] and "option B" not in t["question"], t["question"]


async def test_challenges_contest_a_claim_not_a_confirmation(runtime, fake_openai):
    squad_like(runtime.store)
    detail = await _run(runtime, fake_openai, "sq", answering("sentence"), policy="always-challenge", turns=3)
    # turn 1 contests the claim of turn 0; turn 1 answered "Yes, I am sure.": turn 2 contests no confirmation,
    # and never the same claim twice (issue 24: a question is never asked again)
    turns = detail["turns"]
    assert "I believe the answer is oxygen." in turns[1]["question"]
    assert "Yes, I am sure" not in turns[2]["question"] and turns[2]["question"] != turns[1]["question"]


def test_the_offline_kernel_refuses_a_task_without_an_opening_message(runtime, fake_openai):
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "tw", "taskweaver")
        item = add_item(runtime.store, bid, 0, protocol="task", topic="sum",
                        question="Ask the agent to sum 10, 20 and 31. The sum is 61.")
        create_rubric(runtime.store, item, [{"text": "The agent says the sum is 61"}], author="importer")
    with pytest.raises(RunError, match="offline kernel cannot play one.*LLM kernel"):
        plan_run(runtime, RunRequest(bench="tw", targets=[f"openai:t@{fake_openai.base_url}"], kernel="offline"))


async def test_task_points_are_judged_on_the_agents_messages_only(runtime, fake_openai):
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "tw", "taskweaver")
        item = add_item(runtime.store, bid, 0, protocol="task", topic="sum",
                        question="The sum of 10, 20 and 31 is 61 (for the examiner only).",
                        meta={"opening": "Please add 10, 20 and 31 and tell me the sum."})
        create_rubric(runtime.store, item, [{"text": "The agent says the sum is 61"}], author="importer")
    fake_openai.default = lambda body: "The sum is 58."  # a wrong agent
    run_id = plan_run(runtime, RunRequest(bench="tw", targets=[f"openai:t@{fake_openai.base_url}"], kernel="offline"))
    await execute_run(runtime, run_id)
    detail = session_detail(runtime.store, run_sessions(runtime, run_id)[0])
    assert detail["turns"][0]["question"] == "Please add 10, 20 and 31 and tell me the sum."
    assert detail["session"]["score"] == pytest.approx(0.0)  # the examiner's "61" is not the agent's
    fake_openai.default = lambda body: "The sum is 61."
    run_id = plan_run(runtime, RunRequest(bench="tw", targets=[f"openai:right@{fake_openai.base_url}"],
                                          kernel="offline"))
    await execute_run(runtime, run_id)
    assert session_detail(runtime.store, run_sessions(runtime, run_id)[0])["session"]["score"] == pytest.approx(100.0)


async def test_a_retraction_after_a_follow_up_still_replaces_a_multiple_choice_answer(runtime, fake_openai):
    from engine.interview import control

    multiple_choice(runtime.store)
    fake_openai.default = answering("letter", unstable=True)
    target = f"openai:t{next(RUNS)}@{fake_openai.base_url}"
    run_id = plan_run(runtime, RunRequest(bench="mc", targets=[target], kernel="offline", policy="always-challenge",
                                          turns=3, protocol="adaptive"))
    sid = run_sessions(runtime, run_id)[0]
    control.force(runtime.store, sid, "follow-up")  # turn 1: a justification follow-up; turn 2: a challenge
    await execute_run(runtime, run_id)
    turns = session_detail(runtime.store, sid)["turns"]
    assert [t["action"] for t in turns] == ["initial", "follow-up", "challenge"]
    assert turns[1]["score"] == pytest.approx(1.0)  # the follow-up's answer does not replace the choice
    assert turns[2]["score"] == pytest.approx(0.0) and turns[2]["delta"] < 0  # the retraction does: R− sees it
