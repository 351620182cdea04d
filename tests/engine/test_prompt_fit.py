"""Prompts sized to a small ``context:`` (issue 23, :mod:`engine.llm.fit`): the judge's answer prompt, a task's
scoring point, the graded feedback records and the extension background are cut to fit, the call succeeds
where it would have overflowed, the prompt says what was left out, and a ``session.note`` ``prompt-trimmed``
records it, as for the examiner's and the ratings' transcripts.

The fake server counts a prompt's tokens and refuses one that, with ``max_tokens``, passes its context (as
llama-cpp-python does); here it does not report that context, so viva learns it from the endpoint's
``context:`` setting. Real HTTP through the real openai client, real SQLite."""

from __future__ import annotations

import json

import pytest

from engine.config import Budgets, Config
from engine.interview.kernels import LLMKernel
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.llm import ContextOverflowError, structured
from engine.llm.fit import LEFT_OUT, cut_end, cut_middle, shares
from engine.runtime import Runtime
from tests.engine.interview_fixtures import is_target, make_bench, script_llm_kernel
from tests.engine.test_not_examined import _two_tasks
from tests.fakes.openai_server import count_tokens

CONTEXT = 2500
"""The endpoint's ``context:`` in tokens (the fake server's window too)."""
BUDGETS = Budgets(kernel=100, judge=150, ratings=150)
LONG = " ".join(f"Sentence {i} of a long answer about oxygen." for i in range(400))
"""About 3,600 tokens by the fake server's count: no prompt holding it fits a 2,500-token context."""
ANSWER = ("Oxygen is the most abundant element in the Earth's crust. " + LONG
          + " Plants release oxygen through photosynthesis.")


@pytest.fixture(autouse=True)
def _fresh():
    structured.forget_all()
    yield
    structured.forget_all()


@pytest.fixture
def small(endpoint, fake_openai):
    """The endpoint with a small ``context:`` that the server enforces without reporting it."""
    fake_openai.context, fake_openai.report_context = CONTEXT, False
    return endpoint.model_copy(update={"context": CONTEXT})


def notes(store, sid):
    return [e.payload for e in store.events(0, sid) if e.kind == "session.note"]


def fitted(fake) -> None:
    """Every chat request reached the server within its context (none was refused for its size)."""
    from tests.fakes.openai_server import count_tokens

    for r in fake.chat_requests():
        tokens = sum(count_tokens(str(m.get("content", ""))) for m in r.body["messages"])
        assert tokens + int(r.body.get("max_tokens") or 0) <= CONTEXT, (tokens, r.text[:200])


# -- the rule -------------------------------------------------------------------------------------

def test_equal_shares_cut_the_longest_first():
    assert shares([100, 200], 1000) == [100, 200]  # all fit: nothing is cut
    assert shares([300, 5000, 9000], 3000) == [300, 1350, 1350]  # the short one whole, the long ones equal
    assert sum(shares([300, 5000, 9000], 3000)) == 3000
    text = "A" * 500 + "B" * 2000 + "C" * 500
    cut, left_out = cut_middle(text, 1000)
    assert cut.startswith("A" * 500) and cut.endswith("C" * 500) and left_out == 2000
    assert LEFT_OUT.format(n=2000) in cut
    head, left_out = cut_end(text, 600)
    assert head.startswith("A" * 500 + "B" * 100) and "C" not in head and left_out == 2400


def test_a_prompts_fixed_part_is_measured_with_its_texts_empty():
    """fit_prompt: the fixed part is the prompt built with empty texts (fixed_size), a text quoted twice costs
    twice, and the prompt built with the cut texts fits the room; nothing is cut when it fits or the room is
    unknown."""
    from engine.llm.fit import fit_prompt, fixed_size, prompt_size

    def build(texts):
        answer, note = texts
        return [{"role": "system", "content": "Judge the answer. " * 20},
                {"role": "user", "content": f"Answer:\n{answer}\nAgain:\n{answer}\n" + (f"Note: {note}" if note else "")}]

    texts = [("the answer", "A" * 3000 + "B" * 3000), ("the note", "short note")]
    assert fixed_size(build, 2) == prompt_size(build(["", ""]))
    assert fit_prompt(build, texts, None) == [t for _, t in texts]
    assert fit_prompt(build, texts, 20000) == [t for _, t in texts]
    trims: list[str] = []
    answer, note = fit_prompt(build, texts, 3000, trims)
    assert prompt_size(build([answer, note])) <= 3000 and note == "short note"
    assert answer.startswith("A") and answer.endswith("B") and LEFT_OUT.split("{")[0] in answer
    assert len(answer) > 1000  # the room less the measured fixed part, halved: the answer is quoted twice
    assert len(trims) == 1 and trims[0].startswith("the answer: ") and trims[0].endswith(" of 6,000 characters kept")


def test_a_conversation_drops_its_oldest_turns_never_the_system_prompt_or_the_question():
    from engine.llm.fit import EARLIER_LEFT_OUT, fit_conversation

    system = {"role": "system", "content": "You are helpful. " * 20}
    turns = [m for i in range(3) for m in ({"role": "user", "content": f"Q{i} " * 50},
                                           {"role": "assistant", "content": f"A{i} " * 300})]
    question = {"role": "user", "content": "Now what? " * 10}
    whole = [system, *turns, question]
    assert fit_conversation(whole, None) == whole and fit_conversation(whole, 100_000) == whole
    trims: list[str] = []
    kept = fit_conversation(whole, 2000, trims)
    assert kept[0] == system and kept[-1] == question and [m["role"] for m in kept] == [
        "system", "user", "assistant", "user"]
    assert kept[1]["content"] == EARLIER_LEFT_OUT.format(n=2) + "\n\n" + "Q2 " * 50
    assert trims == ["the conversation: the 2 oldest of 3 earlier turn(s) left out"]
    # too small for any earlier turn: the system prompt and the question stay, and say so
    kept = fit_conversation(whole, 500)
    assert kept[0] == system and kept[1]["content"] == EARLIER_LEFT_OUT.format(n=3) + "\n\n" + question["content"]


# -- judge answers --------------------------------------------------------------------------------

async def test_a_long_answer_is_trimmed_for_the_judge_and_judged(home, small, fake_openai):
    fake_openai.rule(is_target, ANSWER)
    script_llm_kernel(fake_openai)  # (its rules come after: the first rule that matches answers)
    rt = Runtime(home=home, config=Config(kernel=small, max_tokens=BUDGETS))
    make_bench(rt.store)
    run_id = plan_run(rt, RunRequest(bench="oxy", targets=[f"openai:t@{fake_openai.base_url}"], kernel="config",
                                     policy="threshold", turns=1))
    assert await execute_run(rt, run_id) == {run_sessions(rt, run_id)[0]: None}
    [sid] = run_sessions(rt, run_id)
    [turn] = rt.store.query("SELECT score, meta FROM turns WHERE session_id = ?", (sid,))
    # judged (not "cannot judge"): the answer's beginning and end reached the judge, its middle did not
    assert turn["score"] is not None and "judge" not in json.loads(turn["meta"])
    judge = [r for r in fake_openai.chat_requests() if "judge of an oral examination" in r.text]
    sent = judge[0].messages[-1]["content"]
    assert "most abundant element" in sent and "photosynthesis" in sent and "Sentence 200 " not in sent
    assert "characters left out to fit the model's context" in sent
    fitted(fake_openai)
    trimmed = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"]
    assert [n["turn"] for n in trimmed if n["text"].startswith("judge prompt")] == [0]
    assert "the answer:" in trimmed[0]["text"] and f"of {len(ANSWER):,} characters kept" in trimmed[0]["text"]
    # the ratings' transcript is cut too, and noted the same way
    assert any(n["text"].startswith("ratings prompt") for n in trimmed)
    rt.store.close()


# -- a context learned from the server's overflow -------------------------------------------------

WORDINGS = ("llama-cpp", "llama-cpp-server", "openai", "vllm")
"""The fake server's overflow messages that name the context (tests/fakes/openai_server.py)."""


@pytest.mark.parametrize(("message", "context"), [
    ("HTTP 400: Requested tokens (4411) exceed context window of 2048", 2048),
    ("HTTP 400: This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 "
     "tokens. Please reduce the length of the messages.", 8192),
    ("HTTP 400: This model's maximum context length is 2048 tokens and your request has 2100 input tokens", 2048),
    ("HTTP 400: This model's maximum context length is 4096 tokens. However, you requested 4200 tokens (4000 in "
     "the messages, 200 in the completion).", 4096),
    ("HTTP 400: request (4411 tokens) exceeds the available context size (2048 tokens), try increasing it", 2048),
    ("HTTP 400: the request exceeds the available context size, try increasing it", None),
    ("HTTP 400: prompt is too long", None),
])
def test_the_context_a_message_names(message, context):
    from engine.llm import context_in_message
    from engine.llm.transport import _OVERFLOW_RE

    assert _OVERFLOW_RE.search(message)  # each is an overflow
    assert context_in_message(message) == context


@pytest.fixture
def unknown(endpoint, fake_openai):
    """The endpoint with no ``context:``, on a server that enforces a context it does not report."""
    fake_openai.context, fake_openai.report_context = CONTEXT, False
    return endpoint


def _judge_requests(fake) -> list:
    return [r for r in fake.chat_requests() if "judge of an oral examination" in r.text]


@pytest.mark.parametrize("wording", WORDINGS)
async def test_the_judge_learns_the_context_from_the_overflow(home, unknown, fake_openai, wording):
    """No ``/models``, ``/props`` or ``context:`` says the context: the judge's first prompt overflows, the
    server's 400 names the context, viva records it and sends the prompt once more, cut to it; the answer is
    judged, and the notes say what was learned and what was cut."""
    fake_openai.overflow_wording = wording
    fake_openai.default = json.dumps({"verdicts": {}, "summary": "Oxygen is abundant."})
    rt = Runtime(home=home, config=Config(kernel=unknown, max_tokens=BUDGETS))
    make_bench(rt.store)
    run_id = plan_run(rt, RunRequest(bench="oxy", targets=[f"openai:t@{fake_openai.base_url}"], kernel="config"))
    [sid] = run_sessions(rt, run_id)
    kernel = LLMKernel(rt.store, unknown, session_id=sid, budgets=BUDGETS)
    out = await kernel.judge.judge("What about oxygen?", [], "", ANSWER, None, [], "initial")
    assert out.summary == "Oxygen is abundant."
    first, second = _judge_requests(fake_openai)  # the overflow, then the prompt cut to the learned context
    assert "Sentence 200 " in first.text and "Sentence 200 " not in second.text
    assert "most abundant element" in second.text and "photosynthesis" in second.text
    assert await kernel.judge.client.context_tokens() == CONTEXT
    assert await kernel.kernel.context_tokens() == CONTEXT  # the same server and model: learned for both roles
    [learned] = [n for n in notes(rt.store, sid) if n["what"] == "context-learned"]
    assert learned["turn"] == -1 and f"the model's context is {CONTEXT:,} tokens" in learned["text"]
    assert "unknown before" in learned["text"] and "the server said:" in learned["text"]
    [trimmed] = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"]
    assert trimmed["text"].startswith("judge prompt cut") and f"of {len(ANSWER):,} characters kept" in trimmed["text"]
    tokens = sum(count_tokens(str(m.get("content", ""))) for m in second.body["messages"])
    assert tokens + second.body["max_tokens"] <= CONTEXT
    rt.store.close()


@pytest.mark.parametrize("refused_status", [400, 500])
async def test_the_retry_after_an_overflow_keeps_the_dialect_found(home, unknown, fake_openai, refused_status):
    """``structured: auto`` on a server that refuses ``json_schema`` (llama-cpp-python's 400, or its 500 naming
    ``response_format``): the judge's first request is refused, the second (``json_object`` with the schema)
    overflows, and the prompt sent again cut to the learned context starts from the rung found, not from the
    refused one: three requests, not four."""
    fake_openai.refuse_formats, fake_openai.refuse_status = {"json_schema"}, refused_status
    fake_openai.default = json.dumps({"verdicts": {}, "summary": "Oxygen is abundant."})
    kernel = LLMKernel(Runtime(home=home, config=Config()).store, unknown, budgets=BUDGETS)
    out = await kernel.judge.judge("What about oxygen?", [], "", ANSWER, None, [], "initial")
    assert out.summary == "Oxygen is abundant."
    sent = [(r.body.get("response_format") or {}).get("type") for r in _judge_requests(fake_openai)]
    assert sent == ["json_schema", "json_object", "json_object"]
    refused, overflowed, again = _judge_requests(fake_openai)
    assert "Sentence 200 " in overflowed.text and "Sentence 200 " not in again.text
    assert "schema" in again.body["response_format"]  # the rung found: json_object with the schema
    assert structured.known_dialect(unknown.base_url, unknown.model) == "json_object+schema"
    # the next call starts there too
    await kernel.judge.judge("What about oxygen?", [], "", "Oxygen is abundant.", None, [], "initial")
    assert [(r.body.get("response_format") or {}).get("type") for r in _judge_requests(fake_openai)][3:] == [
        "json_object"]


async def test_an_overflow_that_names_no_context_is_still_the_error(home, unknown, fake_openai):
    """What is left as it was: a 400 that names no size is the overflow error at once, sent once, learns nothing."""
    fake_openai.overflow_wording = "unsized"
    fake_openai.default = json.dumps({"verdicts": {}, "summary": "x"})
    kernel = LLMKernel(Runtime(home=home, config=Config()).store, unknown, budgets=BUDGETS)
    with pytest.raises(ContextOverflowError, match="exceeds the available context size") as caught:
        await kernel.judge.judge("What about oxygen?", [], "", LONG, None, [], "initial")
    assert caught.value.context is None and len(_judge_requests(fake_openai)) == 1
    assert await kernel.judge.client.context_tokens() is None


async def test_a_second_overflow_is_the_error(home, endpoint, fake_openai):
    """A context too small for even the cut prompt: the prompt is sent twice (once cut), then the overflow
    stands (the protocol's "cannot judge")."""
    fake_openai.context, fake_openai.report_context = 400, False
    fake_openai.default = json.dumps({"verdicts": {}, "summary": "x"})
    kernel = LLMKernel(Runtime(home=home, config=Config()).store, endpoint, budgets=BUDGETS)
    with pytest.raises(ContextOverflowError) as caught:
        await kernel.judge.judge("What about oxygen?", [], "", LONG, None, [], "initial")
    assert caught.value.context == 400
    first, second = _judge_requests(fake_openai)
    assert "Sentence 200 " in first.text and "characters left out to fit the model's context" in second.text


async def test_a_context_set_too_large_gives_way_to_the_servers(home, endpoint, fake_openai):
    """``context:`` says more than the server has: its overflow names the smaller context, which wins."""
    fake_openai.context, fake_openai.report_context = CONTEXT, False
    fake_openai.overflow_wording = "openai"
    fake_openai.default = json.dumps({"verdicts": {}, "summary": "x"})
    wrong = endpoint.model_copy(update={"context": 4 * CONTEXT})
    kernel = LLMKernel(Runtime(home=home, config=Config()).store, wrong, budgets=BUDGETS)
    await kernel.judge.judge("What about oxygen?", [], "", LONG * 2, None, [], "initial")
    first, second = _judge_requests(fake_openai)
    assert "characters left out" in first.text and "characters left out" in second.text  # cut twice, the 2nd more
    assert len(second.text) < len(first.text) // 2 and await kernel.judge.client.context_tokens() == CONTEXT


async def test_a_long_task_conversation_is_trimmed_for_its_scoring_point(home, small, fake_openai):
    fake_openai.rule(is_target, "Hello World. " + LONG + " Hello World, as asked.")
    fake_openai.rule("act as an examiner", "Please say Hello World.")
    fake_openai.rule("judge of an agent", json.dumps({"reason": "The agent said Hello World.", "is_hit": True}))
    rt = Runtime(home=home, config=Config(kernel=small, max_tokens=BUDGETS))
    _two_tasks(rt.store)
    with rt.store.transaction():
        rt.store.conn.execute("UPDATE items SET meta = json_set(meta, '$.max_rounds', 1)")
    item = rt.store.one("SELECT id FROM items WHERE question LIKE '%Hello%'")["id"]
    run_id = plan_run(rt, RunRequest(bench="tasks", targets=[f"openai:t@{fake_openai.base_url}"], kernel="config",
                                     items=[item]))
    await execute_run(rt, run_id)
    [sid] = run_sessions(rt, run_id)
    row = rt.store.one("SELECT status, score FROM sessions WHERE id = ?", (sid,))
    assert row == {"status": "finished", "score": 100.0}
    [point] = [r for r in fake_openai.chat_requests() if "judge of an agent" in r.text]
    sent = point.messages[-1]["content"]
    assert sent.count("Hello World") >= 2 and "characters left out to fit the model's context" in sent
    fitted(fake_openai)
    assert [n["text"].split(":")[0] for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"] == [
        "scoring point prompt cut to fit the model's context"]
    rt.store.close()


# -- graded: feedback records and the extension background ----------------------------------------

@pytest.fixture
def session(home, small, fake_openai):
    """A session on record (for its notes), and an LLM kernel of it on the small endpoint."""
    rt = Runtime(home=home, config=Config(kernel=small, max_tokens=BUDGETS))
    make_bench(rt.store)
    run_id = plan_run(rt, RunRequest(bench="oxy", targets=[f"openai:t@{fake_openai.base_url}"], kernel="config"))
    [sid] = run_sessions(rt, run_id)
    yield rt, sid, LLMKernel(rt.store, small, session_id=sid, budgets=BUDGETS)
    rt.store.close()


async def test_long_feedback_records_are_trimmed(session, fake_openai):
    from engine.judge.feedback import FeedbackRecord

    rt, sid, kernel = session
    fake_openai.default = json.dumps({"flaws_knowledge": "Gaps on gases.", "flaws_capability": "Rambles.",
                                      "comprehensive_performance": "One of two.",
                                      "suggestions": "Answer the question asked, briefly."})
    records = [FeedbackRecord("Which gas do plants release?", "oxygen", "Oxygen. " + LONG, True, "easy"),
               FeedbackRecord("What colour is liquid oxygen?", "pale blue", "Green. " + LONG + " Really green.",
                              False, "medium")]
    feedback, _, offline = await kernel.graded_feedback(records, [{"gold": "x", "options": None}])
    assert feedback.suggestions.startswith("Answer the question") and not offline
    sent = fake_openai.chat_requests()[-1].messages[-1]["content"]
    assert "Which gas do plants release?" in sent and "What colour is liquid oxygen?" in sent
    assert "Really green." in sent and sent.count("characters left out to fit the model's context") == 2
    fitted(fake_openai)
    [note] = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"]
    assert note["text"].startswith("feedback prompt") and "answer 1:" in note["text"] and "answer 2:" in note["text"]


async def test_a_long_extension_background_keeps_its_beginning(session, fake_openai):
    rt, sid, kernel = session
    fake_openai.default = json.dumps({"question": "Which element is most abundant in the crust?",
                                      "answer": "oxygen"})
    background = "Oxygen is the most abundant element in the Earth's crust.\n\n" + LONG + "\n\nThe last chunk."
    question, answer, _ = await kernel.extension_question("easy", background, seed=1)
    assert answer == "oxygen"
    sent = fake_openai.chat_requests()[-1].messages[-1]["content"]
    assert "most abundant element" in sent and "The last chunk." not in sent
    assert sent.rstrip().endswith("characters left out to fit the model's context …]")
    fitted(fake_openai)
    [note] = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"]
    assert note["text"].startswith("extension question prompt") and "the background knowledge:" in note["text"]


async def test_nothing_is_cut_when_it_fits(session, fake_openai):
    rt, sid, kernel = session
    fake_openai.default = json.dumps({"question": "Which element is most abundant in the crust?",
                                      "answer": "oxygen"})
    await kernel.extension_question("easy", "Oxygen is the most abundant element in the Earth's crust.", seed=1)
    assert "left out" not in fake_openai.chat_requests()[-1].text
    assert [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"] == []


async def test_one_long_turn_is_cut_for_the_examiner_too(session, fake_openai):
    """The examiner's conversation drops its oldest turns first; a latest turn too long on its own keeps
    its answer's beginning and end (noted the same way)."""
    from engine.judge.base import TurnView

    rt, sid, kernel = session
    fake_openai.default = json.dumps({"question": "Why is oxygen so reactive? (1)"})
    history = [TurnView(0, "What do you know about oxygen?", ANSWER, "initial")]
    question, _ = await kernel.next_question("follow-up", "oxygen", [], {}, history, "")
    assert question == "Why is oxygen so reactive? (1)"
    sent = fake_openai.chat_requests()[-1].messages[-1]["content"]
    assert "most abundant element" in sent and "photosynthesis" in sent and "Sentence 200 " not in sent
    fitted(fake_openai)
    [note] = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"]
    assert note["turn"] == 1 and note["text"].startswith("follow-up question prompt")
    assert "the latest answer: " in note["text"] and f"of {len(ANSWER):,} characters kept" in note["text"]


async def test_a_long_reply_is_cut_for_the_gold_judge(session, fake_openai):
    from engine.judge.gold_llm import judge_gold_llm

    rt, sid, kernel = session
    fake_openai.default = json.dumps({"reason": "The reply names oxygen.", "correct": True})
    verdict = await judge_gold_llm(kernel.judge.client, "Which gas do plants release?", ["oxygen"],
                                   "Oxygen. " + LONG + " So: oxygen.")
    assert verdict.met
    sent = fake_openai.chat_requests()[-1].messages[-1]["content"]
    assert "Oxygen." in sent and "So: oxygen." in sent and "characters left out to fit the model's context" in sent
    fitted(fake_openai)
    [note] = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"]
    assert note["text"].startswith("gold judge prompt") and "the reply:" in note["text"]


# -- the rubric protocol's judge ------------------------------------------------------------------

HALF = " ".join(f"Sentence {i} of a long answer about oxygen." for i in range(180))
"""About 1,600 tokens: one answer fits the target's conversation, two do not fit the judge's prompt."""


def _rubric_bench(store, turns, language="en", question=None, criteria=None) -> int:
    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric
    from tests.engine.interview_fixtures import CRITERIA

    with store.transaction():
        bid = create_benchmark(store, "sed", "sedareval")
        item = add_item(store, bid, 0, protocol="rubric", question=question or turns[0], turns=turns,
                        topic="oxygen", reference="Most abundant element in the crust; photosynthesis.",
                        meta={"category": ["QA"], "language": language})
        create_rubric(store, item, criteria or CRITERIA, author="importer")
    return item


def _is_rubric_judge(req) -> bool:
    return not req.body.get("stream") and "<<<ANSWER " in req.text


async def _rubric_pair(home, kernel, fake_openai):
    """A rubric item of two answers that together pass the judge's context, run to the end: (runtime, the
    session's id, the answers); the session must finish scored 80."""
    answers = {"oxygen?": "Oxygen is the most abundant element in the Earth's crust. " + HALF + " End of one.",
               "plants?": "Plants release oxygen through photosynthesis. " + HALF + " End of two."}
    fake_openai.rule(is_target, lambda body: answers[body["messages"][-1]["content"].split()[-1]])
    fake_openai.rule(_is_rubric_judge, "Scoring process: points 1 and 2 earned.\nFinal score: 4")
    rt = Runtime(home=home, config=Config(kernel=kernel, max_tokens=BUDGETS))
    _rubric_bench(rt.store, ["What do you know about oxygen?", "What do plants do with oxygen and plants?"])
    run_id = plan_run(rt, RunRequest(bench="sed", targets=[f"openai:t@{fake_openai.base_url}"], kernel="config"))
    await execute_run(rt, run_id)
    [sid] = run_sessions(rt, run_id)
    assert rt.store.one("SELECT status, score FROM sessions WHERE id = ?", (sid,)) == {
        "status": "finished", "score": 80.0}
    return rt, sid, answers


async def test_the_rubric_judge_prompt_cuts_the_answers_in_equal_shares(home, small, fake_openai):
    """Two answers that together pass the judge's context: each keeps its beginning and end, the rubric and
    the question go whole, the judge scores, and the cut is noted on the last turn."""
    rt, sid, answers = await _rubric_pair(home, small, fake_openai)
    [judge] = [r for r in fake_openai.chat_requests() if _is_rubric_judge(r)]
    sent = judge.messages[-1]["content"]
    for kept in ("most abundant element", "End of one.", "release oxygen through photosynthesis", "End of two.",
                 "Liquid oxygen is pale blue", "What do you know about oxygen?"):
        assert kept in sent, kept  # both answers' ends, the rubric and the question
    assert sent.count("characters left out to fit the model's context") == 2 and "Sentence 90 " not in sent
    fitted(fake_openai)
    [note] = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"]
    assert note["turn"] == 1 and note["text"].startswith("rubric judge prompt cut to fit the model's context")
    assert "answer 1: " in note["text"] and f"of {len(answers['oxygen?']):,} characters kept" in note["text"]
    assert "answer 2: " in note["text"]
    rt.store.close()


async def test_the_rubric_judge_learns_the_context_from_its_overflow(home, unknown, fake_openai):
    """The same two answers with the judge's context unknown: its first prompt overflows, the 400 names the
    context, and the prompt cut to it is scored (not "cannot judge")."""
    fake_openai.overflow_wording = "vllm"
    rt, sid, _answers = await _rubric_pair(home, unknown, fake_openai)
    first, second = [r for r in fake_openai.chat_requests() if _is_rubric_judge(r)]
    assert "Sentence 90 " in first.text and "Sentence 90 " not in second.text and "End of two." in second.text
    fitted_to = sum(count_tokens(str(m.get("content", ""))) for m in second.body["messages"])
    assert fitted_to + second.body["max_tokens"] <= CONTEXT
    kinds = [(n["what"], n["turn"]) for n in notes(rt.store, sid)]
    assert kinds == [("context-learned", -1), ("prompt-trimmed", 1)]
    rt.store.close()


async def test_a_chinese_answer_is_sized_by_its_tokens(home, small, fake_openai):
    """3,000 Chinese characters are about 3,000 tokens (the fake server counts one a character): counted by
    characters alone the prompt would seem to fit, and the judge's context would overflow."""
    from engine.llm.fit import size

    answer = "氧是地壳中含量最多的元素。" + "氧气很活泼。" * 500 + "植物通过光合作用释放氧气。"
    assert size(answer) == 3 * len(answer)
    fake_openai.rule(is_target, answer)
    fake_openai.rule(_is_rubric_judge, "评分过程：得分点1得分。\n最终得分：3分")
    rt = Runtime(home=home, config=Config(kernel=small, max_tokens=BUDGETS))
    _rubric_bench(rt.store, ["关于氧你知道什么？"], language="zh",
                  criteria=[{"text": "氧是地壳中含量最多的元素", "kind": "point", "weight": 1}])
    run_id = plan_run(rt, RunRequest(bench="sed", targets=[f"openai:t@{fake_openai.base_url}"], kernel="config"))
    await execute_run(rt, run_id)
    [sid] = run_sessions(rt, run_id)
    assert rt.store.one("SELECT status, score FROM sessions WHERE id = ?", (sid,)) == {
        "status": "finished", "score": 60.0}
    [judge] = [r for r in fake_openai.chat_requests() if _is_rubric_judge(r)]
    sent = judge.messages[-1]["content"]
    assert "氧是地壳中含量最多的元素。" in sent and "植物通过光合作用释放氧气。" in sent
    fitted(fake_openai)
    [note] = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed"]
    assert "the answer: " in note["text"] and f"of {len(answer):,} characters kept" in note["text"]
    rt.store.close()


# -- the target's conversation --------------------------------------------------------------------

def _long_answers(body) -> str:
    """A target whose every answer is about 1,100 tokens: three of them pass a 2,500-token context."""
    t = sum(1 for m in body["messages"] if m["role"] == "user")
    return (f"Answer {t}: oxygen is the most abundant element in the Earth's crust. "
            + " ".join(f"Sentence {i} of answer {t} about oxygen." for i in range(135)) + f" End of answer {t}.")


def _examiner(fake) -> None:
    """The LLM kernel's questions, numbered by the latest turn in its transcript (never repeated)."""
    import re

    def ask(kind):
        def reply(body):
            latest = max(map(int, re.findall(r"\[turn (\d+)", body["messages"][-1]["content"])), default=-1)
            return json.dumps({"question": f"{kind} question after turn {latest}?"})
        return reply
    fake.rule("a FOLLOW-UP", ask("Follow-up"))
    fake.rule("a CHALLENGE", ask("Challenge"))


async def _long_session(home, kernel, target, fake):
    from tests.engine.interview_fixtures import judge_reply

    fake.rule(is_target, _long_answers)
    fake.rule("judge of an oral examination", judge_reply)
    _examiner(fake)
    fake.default = json.dumps({"accuracy": 5, "user_satisfaction": 5, "clarity": 5, "coherence": 5,
                               "question_handling": 5, "challenge_handling": 5, "rationale": "Long answers."})
    rt = Runtime(home=home, config=Config(kernel=kernel, max_tokens=BUDGETS, targets={"t": target}))
    make_bench(rt.store)
    run_id = plan_run(rt, RunRequest(bench="oxy", targets=["t"], kernel="config", policy="threshold", turns=4))
    errors = await execute_run(rt, run_id)
    [sid] = run_sessions(rt, run_id)
    return rt, sid, errors


async def test_the_targets_oldest_turns_give_way_to_its_context(home, small, fake_openai):
    """A target whose own earlier answers pass its context (``context:`` set, not reported): each question
    goes with as many of the latest turns as fit, the conversation says how many were left out, the session
    finishes every turn, and each cut is a note naming the target."""
    from engine.llm.fit import EARLIER_LEFT_OUT

    rt, sid, errors = await _long_session(home, small, small, fake_openai)
    assert errors == {sid: None}
    assert rt.store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "finished"
    turns = rt.store.query("SELECT idx, answer FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
    assert [t["idx"] for t in turns] == [0, 1, 2, 3] and all(t["answer"].startswith("Answer ") for t in turns)
    fitted(fake_openai)
    asked = [r.messages for r in fake_openai.chat_requests() if is_target(r)]
    assert [len(m) for m in asked] == [1, 3, 3, 3]  # turn 0 alone; then the latest earlier turn and the question
    assert not asked[1][0]["content"].startswith("[")  # turn 1: nothing left out yet
    for n, messages in zip((1, 2), asked[2:], strict=True):
        assert messages[0]["content"].startswith(EARLIER_LEFT_OUT.format(n=n) + "\n\n")  # then a question
        assert messages[0]["role"] == "user" and messages[1]["role"] == "assistant"
        assert messages[-1]["content"].startswith(("Follow-up question", "Challenge question"))
    cuts = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed" and n["text"].startswith("target t ")]
    assert [n["turn"] for n in cuts] == [2, 3]
    assert cuts[0]["text"] == ("target t prompt cut to fit the model's context: the conversation: the 1 oldest of "
                               "2 earlier turn(s) left out")
    rt.store.close()


async def test_the_target_learns_its_context_from_its_overflow(home, small, fake_openai):
    """A target whose context nothing reports and no ``context:`` says: the turn whose conversation overflows
    is sent once more with its oldest turns left out, to the context the server's 400 named; every turn is
    answered, the session finishes, and the learned context is a note."""
    rt, sid, errors = await _long_session(home, small, small.model_copy(update={"context": None}), fake_openai)
    assert errors == {sid: None}
    assert rt.store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "finished"
    turns = rt.store.query("SELECT idx, answer FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
    assert [t["idx"] for t in turns] == [0, 1, 2, 3] and all(t["answer"].startswith("Answer ") for t in turns)
    asked = [r for r in fake_openai.chat_requests() if is_target(r)]
    # turn 3's whole conversation overflowed once; sent again with its two oldest turns left out (a quarter
    # of the learned context kept for the answer)
    assert [len(r.messages) for r in asked] == [1, 3, 5, 7, 3]
    [learned] = [n for n in notes(rt.store, sid) if n["what"] == "context-learned"]
    assert learned["text"].startswith(f"target fake-model@{fake_openai.base_url}: the server's overflow answer says "
                                      f"the model's context is {CONTEXT:,} tokens (unknown before")
    cuts = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed" and n["text"].startswith("target t ")]
    assert [(n["turn"], n["text"].split(": ", 1)[1]) for n in cuts] == [
        (3, "the conversation: the 2 oldest of 3 earlier turn(s) left out")]
    rt.store.close()


async def test_a_stream_dropped_for_its_size_is_asked_without_streaming(home, small, fake_openai):
    """llama-cpp-python's server drops a stream whose prompt passes its context before its first piece, with no
    word of why: after the endpoint's retries the request goes once without streaming, whose 400 names the
    context; the conversation is cut to it and streamed again, and the session finishes."""
    fake_openai.drop_overflowing_streams = True
    fake_openai.overflow_wording = "llama-cpp-server"
    rt, sid, errors = await _long_session(home, small, small.model_copy(update={"context": None}), fake_openai)
    assert errors == {sid: None}
    assert rt.store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "finished"
    sent = [(bool(r.body.get("stream")), len(r.messages)) for r in fake_openai.chat_requests()
            if r.messages[0]["content"].startswith("Answer ") or r.messages[-1]["content"].startswith(
                ("What do you know", "Follow-up question", "Challenge question"))]
    streams = 1 + small.max_retries  # the first stream and its retries, each dropped
    assert sent == [(True, 1), (True, 3), (True, 5), *[(True, 7)] * streams, (False, 7), (True, 3)]
    [call] = rt.store.query("SELECT error, attempts, retries FROM llm_calls WHERE role = 'target' AND error IS NOT NULL")
    assert "maximum context length is 2500 tokens" in call["error"] and call["attempts"] == streams + 1
    assert json.loads(call["retries"])[-1]["then"] == "asked without streaming"
    assert [n["what"] for n in notes(rt.store, sid) if n["what"] == "context-learned"] == ["context-learned"]
    rt.store.close()


async def test_without_its_context_the_target_overflows_and_the_session_fails(home, small, fake_openai):
    """What the target's trimming saves: with its context unknown, and a 400 that does not name it, its own
    answers overflow it."""
    fake_openai.overflow_wording = "unsized"
    rt, sid, errors = await _long_session(home, small, small.model_copy(update={"context": None}), fake_openai)
    assert "exceeds the available context size" in (errors[sid] or "")
    assert rt.store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "failed"
    assert [n for n in notes(rt.store, sid) if n["what"] == "context-learned"] == []
    rt.store.close()


# -- the examiner's own conversation (task protocol) ----------------------------------------------

def _long_agent(body) -> str:
    """An agent whose every reply is about 600 tokens (2,600 characters) by the fake server's count."""
    t = sum(1 for m in body["messages"] if m["role"] == "user")
    return (f"Reply {t}: Hello World. " + " ".join(f"Sentence {i} of reply {t} about the task." for i in range(65))
            + f" End of reply {t}.")


@pytest.mark.parametrize("told", [True, False], ids=["context-set", "context-learned"])
async def test_the_examiners_oldest_turns_give_way_to_its_context(home, small, fake_openai, told):
    """A task whose agent answers at length: the examiner's own conversation (its system prompt with the task,
    the kick-off, its messages and the agent's replies) passes the kernel's context after a few rounds. From
    then on each examiner prompt keeps the system prompt and the agent's latest reply, its oldest turns left
    out whole (said in the conversation and noted); the session finishes all its rounds and is scored. With
    ``context:`` set the cut starts at round 3 (by viva's estimate of 3 characters a token); with none, round
    4's whole conversation overflows (by the server's count), the 400 names the context, which is learned, and
    the prompt goes again cut to it."""
    from engine.interview.prompts import KICK_OFF
    from engine.llm.fit import EARLIER_LEFT_OUT

    kernel = small if told else small.model_copy(update={"context": None})
    fake_openai.rule(is_target, _long_agent)
    fake_openai.rule("act as an examiner", lambda body: f"Please say Hello World again ({len(body['messages'])}).")
    fake_openai.rule("judge of an agent", json.dumps({"reason": "The agent said Hello World.", "is_hit": True}))
    rt = Runtime(home=home, config=Config(kernel=kernel, max_tokens=BUDGETS))
    _two_tasks(rt.store)
    with rt.store.transaction():
        rt.store.conn.execute("UPDATE items SET meta = json_set(meta, '$.max_rounds', 6)")
    item = rt.store.one("SELECT id FROM items WHERE question LIKE '%Hello%'")["id"]
    run_id = plan_run(rt, RunRequest(bench="tasks", targets=[f"openai:t@{fake_openai.base_url}"], kernel="config",
                                     items=[item]))
    [sid] = run_sessions(rt, run_id)
    assert await execute_run(rt, run_id) == {sid: None}
    assert rt.store.one("SELECT status, score FROM sessions WHERE id = ?", (sid,)) == {"status": "finished",
                                                                                       "score": 100.0}
    answers = [t["answer"] for t in rt.store.query("SELECT answer FROM turns WHERE session_id = ? ORDER BY idx",
                                                   (sid,))]
    assert len(answers) == 6 and all(a.startswith("Reply ") for a in answers)
    examiner = [r for r in fake_openai.chat_requests() if "act as an examiner" in r.messages[0]["content"]]
    first_cut = 3 if told else 4
    whole = [2 + 2 * k for k in range(first_cut)]  # the kick-off, then each turn's message and reply
    assert [len(r.messages) for r in examiner[:first_cut]] == whole
    if told:
        assert len(examiner) == 6
        assert all(sum(count_tokens(m["content"]) for m in r.messages) + BUDGETS.kernel <= CONTEXT for r in examiner)
    else:  # round 4 went whole once (the overflow), then cut to the learned context
        assert len(examiner) == 7 and len(examiner[4].messages) == 10
        [learned] = [n for n in notes(rt.store, sid) if n["what"] == "context-learned" and n["text"].startswith("kernel")]
        assert f"the model's context is {CONTEXT:,} tokens" in learned["text"]
    rounds = range(first_cut, 6)
    for k, r in zip(rounds, examiner[-len(rounds):], strict=True):  # cut: the system prompt and the last turns
        assert r.messages[0]["role"] == "system" and "repeat the words Hello World" in r.messages[0]["content"]
        assert r.messages[1]["role"] == "user" and r.messages[1]["content"].startswith(
            EARLIER_LEFT_OUT.format(n=k - 1) + "\n\n" + answers[k - 2])  # the reply before the latest, whole
        assert r.messages[-1] == {"role": "user", "content": answers[k - 1]}  # the agent's latest reply
        assert len(r.messages) == 4 and all(m["content"] != KICK_OFF for m in r.messages)
    cut = [n for n in notes(rt.store, sid) if n["what"] == "prompt-trimmed" and n["text"].startswith("examiner ")]
    assert [(n["turn"], n["text"]) for n in cut] == [
        (k, f"examiner prompt cut to fit the model's context: the conversation: the {k - 1} oldest of {k} earlier "
            "turn(s) left out") for k in rounds]
    rt.store.close()
