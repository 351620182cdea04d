"""JudgeAgent's graded protocol through the real engine: a hand-worked batch with a scripted LLM
kernel, judge and target on the fake server (knowledge base and context graph built for real), and
MedQA-style items with the offline kernel separating a right target from a wrong one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.bench.items import add_item, create_benchmark
from engine.bench.rubric import create_rubric
from engine.config import Config
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.knowledge.graph import build_graph
from engine.knowledge.kb import build_kb
from engine.metrics.sessions import graded_table, target_table
from engine.runtime import Runtime
from tests.fakes.openai_server import GOLD_JUDGE_PROMPT, gold_judge_reply

FIXTURES = Path(__file__).parent / "fixtures" / "kb"

# Base questions: (question, gold, difficulty label); the target's first and second (validation) answers.
BASE = [
    ("Which city did Marie Curie work in?", "Paris", None, "Paris", "Paris"),           # right -> right
    ("Which element did Marie Curie name after Poland?", "polonium", "hard", "radium", "polonium"),  # wrong -> right
    ("Who was Marie Curie's husband?", "Pierre Curie", "easy", "Pierre Curie", "Paris"),  # right -> wrong
]
EXTENSIONS = [("EXT1: which element did the Curies discover with polonium?", "radium", "radium"),   # right
              ("EXT2: in which city were the Curies' experiments done?", "Paris", "Paris"),          # right
              ("EXT3: which element was named after a country?", "polonium", "uranium")]             # wrong


@pytest.fixture
def runtime(home, endpoint, tmp_path):
    rt = Runtime(home=home, config=Config(kernel=endpoint))
    src = tmp_path / "graph"
    shutil.copytree(FIXTURES / "graph", src)
    build_kb(rt.store, home, "g", [src], chunk_chars=60, overlap=0)
    build_graph(rt.store, "g")
    kb_id = rt.store.one("SELECT id FROM knowledge_bases WHERE name = 'g'")["id"]
    with rt.store.transaction():
        bid = create_benchmark(rt.store, "curie", "jsonl", kb_id=kb_id)
        for i, (q, gold, difficulty, _, _) in enumerate(BASE):
            item = add_item(rt.store, bid, i, protocol="graded", topic="Curie", question=q, gold=gold,
                            reference=gold, difficulty=difficulty)
            create_rubric(rt.store, item, [{"text": f"Answers: {gold}", "answers": [gold]}], author="importer")
    yield rt
    rt.close()


def script(fake) -> list[str]:
    """Route target, extension-writer and feedback requests; returns the log of asked difficulties."""
    difficulties: list[str] = []
    extensions = iter(EXTENSIONS)

    def target(body) -> str:
        q = body["messages"][-1]["content"]
        validation = "[suggestions]" in q
        for question, _, _, first, second in BASE:
            if question in q:
                return second if validation else first
        for question, _, reply in EXTENSIONS:
            if question in q:
                return reply
        return "I don't know."

    def writer(body) -> str:
        system = body["messages"][0]["content"]
        difficulties.append(system.split("at difficulty ", 1)[1].split(",", 1)[0])
        question, answer, _ = next(extensions)
        return json.dumps({"question": question, "answer": answer})

    fake.rule(lambda r: bool(r.body.get("stream")), target)
    fake.rule(GOLD_JUDGE_PROMPT, gold_judge_reply)
    fake.rule("interactive\nextension", writer)
    fake.rule("interviewee", json.dumps({
        "flaws_knowledge": "Gaps in the history of early radioactivity research.",
        "flaws_capability": "Answers without checking names against the question.",
        "comprehensive_performance": "Mixed.",
        "suggestions": "Recall who worked with whom, and where, before answering; check each name you give."}))
    return difficulties


async def test_a_hand_worked_batch(runtime, fake_openai):
    asked = script(fake_openai)
    run_id = plan_run(runtime, RunRequest(bench="curie", targets=[f"openai:t@{fake_openai.base_url}"],
                                          kernel="config"))
    errors = await execute_run(runtime, run_id)
    assert not any(errors.values()), errors
    [sid] = run_sessions(runtime, run_id)
    steps = runtime.store.query("SELECT phase, difficulty, correct, gain, average, next_difficulty FROM graded_steps "
                                "WHERE session_id = ? ORDER BY id", (sid,))
    # gains: +1.5 (unlabelled = medium), -0.2 (hard, wrong), +1 (easy); then the extension rounds
    assert [s["gain"] for s in steps[:3]] == pytest.approx([1.5, -0.2, 1.0])
    assert [s["next_difficulty"] for s in steps[:3]] == ["hard", "medium", "medium"]
    ext = [s for s in steps if s["phase"] == "extension"]
    assert asked == [s["difficulty"] for s in ext] and len(ext) >= 2
    # the difficulty moves within the batch: the first two rounds at medium, then hard after 1.06
    assert asked[:2] == ["medium", "medium"] and (len(asked) < 3 or asked[2] == "hard")
    averages = [s["average"] for s in steps if s["average"] is not None]
    assert averages[:5] == pytest.approx([1.5, 0.65, 2.3 / 3, 3.8 / 4, 5.3 / 5])
    fig = graded_table(runtime.store, [sid])[f"openai:t@{fake_openai.base_url}"]
    v = fig["validation"]
    assert (v["n"], v["acc1"], v["acc2"], v["cr"], v["cte"], v["delta"]) == pytest.approx(
        (3, 2 / 3, 2 / 3, 1 / 3, 1 / 3, 0.0))
    row = target_table(runtime.store, [sid])[0]
    assert row["score"] == pytest.approx(100 * 2 / 3)  # the session's score is ACC1
    kinds = [e.kind for e in runtime.store.events(0, sid)]
    assert kinds.index("graded.feedback") < kinds.index("turn.started", kinds.index("graded.feedback"))
    # the gold LLM judge's tokens are in the turns' figures (they were spent, recorded in llm_calls, and were
    # missing from the turns a graded session shows)
    gold = runtime.store.one("SELECT COALESCE(SUM(tokens_in), 0) AS t, COUNT(*) AS n FROM llm_calls "
                             "WHERE session_id = ? AND purpose LIKE 'gold judge%'", (sid,))
    answers = runtime.store.one("SELECT COALESCE(SUM(tokens_in), 0) AS t FROM llm_calls WHERE session_id = ? "
                                "AND purpose = 'answer'", (sid,))["t"]
    turns = runtime.store.one("SELECT SUM(tokens_in) AS t FROM turns WHERE session_id = ?", (sid,))["t"]
    assert gold["n"] > 0 and turns >= answers + gold["t"]


def test_medqa_with_the_offline_kernel_separates_right_from_wrong(home, fake_openai):
    rt = Runtime(home=home, config=Config())
    options = {"A": "Iron", "B": "Oxygen", "C": "Silicon", "D": "Aluminium"}
    with rt.store.transaction():
        bid = create_benchmark(rt.store, "mc", "medqa")
        for i in range(6):
            item = add_item(rt.store, bid, i, protocol="graded", topic="geo", question=f"Question {i}: which element?",
                            options=options, gold="B", reference="Oxygen")
            create_rubric(rt.store, item, [{"text": "Chooses option B: Oxygen", "answers": ["B"]}], author="importer")
    fake_openai.rule(lambda r: "right" in r.body["model"], "B")
    fake_openai.rule(lambda r: "wrong" in r.body["model"], "The answer is C.")
    right, wrong = f"openai:right@{fake_openai.base_url}", f"openai:wrong@{fake_openai.base_url}"
    import asyncio

    run_id = plan_run(rt, RunRequest(bench="mc", targets=[right, wrong], kernel="offline"))
    errors = asyncio.run(execute_run(rt, run_id))
    assert not any(errors.values()), errors
    sessions = rt.store.query("SELECT id, target, score FROM sessions WHERE run_id = ?", (run_id,))
    assert len(sessions) == 4  # two batches of three per target
    assert all(s["score"] == 100.0 for s in sessions if s["target"] == right)
    assert all(s["score"] == 0.0 for s in sessions if s["target"] == wrong)
    notes = [e.payload["text"] for e in rt.store.events() if e.kind == "graded.note"]
    assert notes and all("no knowledge base" in n for n in notes)
    feedback = [e.payload for e in rt.store.events() if e.kind == "graded.feedback"]
    assert feedback and all(f["offline"] for f in feedback)
    assert all("Oxygen" not in f["suggestions"] and "option B" not in f["suggestions"] for f in feedback)
    rt.close()


def test_a_pasted_passage_is_judged_without_the_copy(home, fake_openai):
    """SQuAD-style items (the passage in ``meta.context``): a target that pastes the passage restates every
    candidate answer without singling one out, so it is judged on what it says besides the copy, as the
    adaptive protocol judges it; a target that gives the span is credited."""
    passage = ("Marie Curie worked in Paris for most of her life. She named polonium after Poland, her native "
               "country. Her husband Pierre Curie shared the 1903 Nobel Prize with her. The couple also "
               "discovered radium in 1898.")
    golds = ["Paris", "polonium", "Pierre Curie", "radium", "Paris", "Poland"]
    rt = Runtime(home=home, config=Config())
    with rt.store.transaction():
        bid = create_benchmark(rt.store, "sq", "squad")
        for i, gold in enumerate(golds):
            item = add_item(rt.store, bid, i, protocol="graded", topic="Curie", question=f"Question {i}: {gold}?",
                            gold=gold, reference=gold, meta={"context": passage})
            create_rubric(rt.store, item, [{"text": f"Answers: {gold}", "answers": [gold]}], author="importer")
    fake_openai.rule(lambda r: "paste" in r.body["model"], passage)
    fake_openai.rule(lambda r: "span" in r.body["model"],
                     lambda body: body["messages"][-1]["content"].split(": ", 1)[1].rstrip("?"))
    paste, span = f"openai:paste@{fake_openai.base_url}", f"openai:span@{fake_openai.base_url}"
    import asyncio

    run_id = plan_run(rt, RunRequest(bench="sq", targets=[paste, span], kernel="offline"))
    errors = asyncio.run(execute_run(rt, run_id))
    assert not any(errors.values()), errors
    sessions = rt.store.query("SELECT id, target, score FROM sessions WHERE run_id = ?", (run_id,))
    assert {s["score"] for s in sessions if s["target"] == span} == {100.0}
    assert {s["score"] for s in sessions if s["target"] == paste} == {0.0}
    why = [r["rationale"] for r in rt.store.query(
        "SELECT v.rationale FROM verdicts v JOIN turns t ON t.id = v.turn_id JOIN sessions s ON s.id = t.session_id "
        "WHERE s.target = ?", (paste,))]
    assert why and all("pastes 4 sentence(s) of the item's passage" in w for w in why)
    rt.close()
