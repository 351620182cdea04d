"""A JSON repair sized to a small context (issue 23): the repair's request (the prompt again, the problem and
the JSON schema) fits the model's context with room for ``max_tokens``, or is not sent.

Measured on llama-cpp-python's server at ``n_ctx`` 1,024: the judge's first prompt fit (770 tokens), its repair
(1,204) did not, so every turn was "cannot judge". Here the fake server counts tokens as a pessimistic
tokenizer does (each brace, quote and colon a token: a JSON schema runs about 2.3 characters a token) and
refuses what passes its context. Real HTTP through the real openai client, real SQLite."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from engine.bench.model import Criterion
from engine.config import Budgets, Config
from engine.interview.kernels import LLMKernel
from engine.interview.run import RunRequest, plan_run, run_sessions
from engine.judge.llm import POINT_SCHEMA, judge_schema
from engine.llm import UNUSABLE, ContextOverflowError, LLMClient, spent, structured
from engine.llm.fit import CHARS_PER_TOKEN, fit, json_size
from engine.runtime import Runtime
from tests.engine.interview_fixtures import make_bench
from tests.fakes.openai_server import count_tokens

BUDGETS = Budgets(kernel=100, judge=150, ratings=150)
CRITERIA = [Criterion("c1", 0, "Oxygen is the most abundant element in the Earth's crust", weight=2),
            Criterion("c2", 1, "Plants release oxygen through photosynthesis"),
            Criterion("c3", 2, "Liquid oxygen is pale blue"),
            Criterion("c4", 3, "Claims that oxygen is a noble gas", kind="deduction")]
ANSWER = ("Oxygen is the most abundant element in the Earth's crust. "
          + " ".join(f"Sentence {i} of a long answer about oxygen." for i in range(40))
          + " Plants release oxygen through photosynthesis.")
"""About 380 tokens by the fake server's count; the judge's whole first prompt with it about 990."""
VERDICT = json.dumps({"verdicts": {"c1": {"rationale": "Said it is the most abundant.", "in_answer": True, "met": True},
                                   "c2": {"rationale": "Named photosynthesis.", "in_answer": True, "met": True},
                                   "c3": {"rationale": "Said nothing of its colour.", "in_answer": False, "met": False},
                                   "c4": {"rationale": "Made no such claim.", "in_answer": False, "met": False}},
                      "summary": "Oxygen is the most abundant element in the crust; plants release it."})
BAD = "I think the candidate did well on oxygen, mostly."


@pytest.fixture(autouse=True)
def _fresh():
    structured.forget_all()
    yield
    structured.forget_all()


def is_repair(body) -> bool:
    return "could not be used" in body["messages"][-1]["content"]


def bad_then_good(body) -> str:
    """The judge: prose (no JSON) to a first prompt, a verdict to a repair."""
    return VERDICT if is_repair(body) else BAD


def judged(fake) -> list:
    return [r for r in fake.chat_requests() if "judge of an oral examination" in r.text]


def tokens(request) -> int:
    return sum(count_tokens(str(m.get("content", ""))) for m in request.body["messages"])


def within(fake, context: int) -> None:
    """Every request that reached the server fit its context with its ``max_tokens``."""
    for r in fake.chat_requests():
        assert tokens(r) + int(r.body.get("max_tokens") or 0) <= context, (tokens(r), r.text[-300:])


def kernel_for(home, endpoint) -> tuple[LLMKernel, Runtime]:
    rt = Runtime(home=home, config=Config())
    return LLMKernel(rt.store, endpoint, budgets=BUDGETS), rt


async def judge(kernel: LLMKernel):
    return await kernel.judge.judge("What do you know about oxygen?", CRITERIA, "", ANSWER, None, [], "initial")


# -- the estimate and the message -----------------------------------------------------------------

@pytest.mark.parametrize("schema", [judge_schema(["c1", "c2", "c3", "c4"]), POINT_SCHEMA])
def test_a_schema_is_counted_at_json_rates_not_prose_rates(schema):
    """A schema's text costs what a punctuation-heavy tokenizer spends on it (the fake server's count, about
    2.3 characters a token), where the prose rate (3) counted the judge's schema as 388 tokens of its 501."""
    text = structured.schema_text(schema)
    assert json_size(text) >= count_tokens(text) * CHARS_PER_TOKEN > len(text)


def test_a_repair_leaves_out_the_held_schema_then_cuts_the_problem():
    schema = judge_schema(["c1", "c2"])
    problem = "not valid JSON: " + "x" * 600
    whole = structured.repair_message(problem, schema, 1, 2, room=None)
    assert structured.schema_text(schema) in whole and problem in whole
    trims: list[str] = []
    # room for the wording and the problem, not the schema: the schema, held by the grammar, is left out
    short = structured.repair_message(problem, schema, 1, 2, room=structured.repair_size(None, problem), held=True,
                                      trims=trims)
    assert problem in short and '"properties"' not in short and "holds the reply" in short
    assert trims == ["the repair's JSON schema: left out (the server's grammar holds the reply to it)"]
    # less room: the problem keeps its beginning and its end
    trims.clear()
    cut = structured.repair_message(problem, schema, 1, 2, room=structured.repair_size(None, problem) - 300,
                                    held=True, trims=trims)
    assert cut.startswith(structured.REPAIR_HEAD.format(n=1, of=2) + "not valid JSON: ")
    assert "characters left out" in cut and len(cut) < len(short)
    assert trims[-1].startswith("the repair's problem: ") and trims[-1].endswith(f"of {len(problem):,} characters kept")
    # not held: the schema is a fixed part, and a room without it is no repair at all
    assert structured.repair_message(problem, schema, 1, 2, room=structured.repair_size(None, problem)) is None


# -- the judge at a small context -----------------------------------------------------------------

async def test_a_bad_first_reply_gets_a_repair_that_fits_then_a_verdict(home, endpoint, fake_openai):
    """A 1,000-token context the judge knows (``context:``): the first prompt is cut to fit; its reply is no
    JSON; the repair with the whole schema would not fit (548 tokens), so it goes without it (the server's
    grammar holds the reply to the schema sent as ``response_format``) and fits; the verdict is returned."""
    fake_openai.context, fake_openai.report_context = 1000, False
    fake_openai.default = bad_then_good
    kernel, rt = kernel_for(home, endpoint.model_copy(update={"context": 1000}))
    out = await judge(kernel)
    assert out.verdicts["c1"].met and not out.verdicts["c3"].met and out.summary.startswith("Oxygen")
    first, repair = judged(fake_openai)
    assert repair.body["messages"][:-1] == first.body["messages"]  # the prompt again, then the repair
    assert repair.body["response_format"]["type"] == "json_schema"  # the schema still goes, for the grammar
    assert "not valid JSON: 'I think the candidate did well" in repair.messages[-1]["content"]
    assert structured.schema_text(judge_schema(["c1", "c2", "c3", "c4"])) not in repair.text
    within(fake_openai, 1000)
    rt.store.close()


async def test_a_repair_learned_from_an_overflow_fits_the_second_time(home, endpoint, fake_openai):
    """Nothing says the context (1,500): the whole first prompt fits (990 tokens and 150 for the reply) and
    its reply is no JSON; the repair, sized to nothing, overflows; the 400 names the context, and the prompt
    and its repair are built again to it (schema without the grammar: ``structured: off``, so the schema's text
    is a fixed part of the repair and the answer gives way)."""
    fake_openai.context, fake_openai.report_context = 1500, False
    fake_openai.overflow_wording = "llama-cpp-server"
    fake_openai.default = bad_then_good
    kernel, rt = kernel_for(home, endpoint.model_copy(update={"structured": "off"}))
    out = await judge(kernel)
    assert out.verdicts["c2"].met
    first, overflowed, again, repair = judged(fake_openai)
    assert ANSWER in first.text and is_repair(overflowed.body) and not is_repair(again.body)
    assert "characters left out to fit the model's context" in again.text
    assert structured.schema_text(judge_schema(["c1", "c2", "c3", "c4"])) in repair.messages[-1]["content"]
    assert tokens(overflowed) + 150 > 1500 >= tokens(repair) + 150
    assert await kernel.judge.client.context_tokens() == 1500
    rt.store.close()


async def test_a_repair_whose_fixed_parts_cannot_fit_is_not_sent(home, endpoint, fake_openai):
    """A context where the first prompt fits but no repair can: the schema's text is a fixed part (no
    grammar holds the reply: ``structured: off``) and with the answer cut to its least the prompt and the
    schema pass the context. The repair is not sent; the error says why and what to do, and is a bad
    exchange (the protocol's "cannot judge"), with the first call's tokens counted."""
    fake_openai.context, fake_openai.report_context = 1000, False
    fake_openai.default = bad_then_good
    kernel, rt = kernel_for(home, endpoint.model_copy(update={"context": 1000, "structured": "off"}))
    with pytest.raises(ContextOverflowError) as caught:
        await judge(kernel)
    message = str(caught.value)
    assert "judge repair 1 not sent" in message and "context of 1,000 tokens with 150 kept for the reply" in message
    assert "larger context" in message and "smaller max_tokens" in message
    assert isinstance(caught.value, UNUSABLE) and caught.value.context is None
    [first] = judged(fake_openai)  # the only request: the one that fit
    assert spent(caught.value).calls == 1 and spent(caught.value).tokens_in == tokens(first)
    within(fake_openai, 1000)
    rt.store.close()


# -- any structured call: the prompt gives way to its repair --------------------------------------

class Verdict(BaseModel):
    reason: str
    is_hit: bool


async def test_a_prompt_built_with_no_room_kept_is_cut_for_its_repair(home, endpoint, fake_openai):
    """A caller that keeps nothing free for a repair (``reserve_chars=0``): its first prompt fills the context;
    the repair builds it again smaller (its long text cut by fit.py's rules, noted as the repair's cut) so that
    the prompt, the problem and the schema fit with the reply's ``max_tokens``."""
    fake_openai.context, fake_openai.report_context = 700, False
    fake_openai.default = lambda body: ('{"reason": "It names photosynthesis.", "is_hit": true}' if is_repair(body)
                                        else '{"reason": "It names photosynthesis."}')
    rt = Runtime(home=home, config=Config())
    make_bench(rt.store)
    [sid] = run_sessions(rt, plan_run(rt, RunRequest(bench="oxy", targets=[f"openai:t@{fake_openai.base_url}"])))
    client = LLMClient(rt.store, endpoint.model_copy(update={"context": 700, "structured": "off"}), "judge",
                       session_id=sid, max_tokens=100)
    text = " ".join(f"Item {i} is on." for i in range(300))  # 3 characters a token by the fake's count

    def build(room, trims):
        [kept] = fit([("the transcript", text)], None if room is None else room - 200, trims)
        return [{"role": "system", "content": "Say whether the transcript names photosynthesis."},
                {"role": "user", "content": kept}]

    out = await client.fitted_json(build, Verdict, call="point", reserve_chars=0)
    assert out.value.is_hit and out.repairs == 1
    first, repair = fake_openai.chat_requests()
    assert "Item 0 is on." in first.text and "Item 299 is on." in first.text and "Item 150 is on." not in first.text
    assert len(repair.messages[1]["content"]) < len(first.messages[1]["content"]) - 300
    first_cut, repair_cut = [e.payload for e in rt.store.events(0, sid) if e.kind == "session.note"]
    assert first_cut["what"] == repair_cut["what"] == "prompt-trimmed" and repair_cut["turn"] == -1
    assert first_cut["text"].startswith("point prompt cut to fit the model's context: the transcript: ")
    assert repair_cut["text"].startswith("point repair 1 prompt cut to fit the model's context: the transcript: ")
    assert "is_hit: Field required" in repair.messages[-1]["content"]
    assert structured.schema_text(structured.schema_of(Verdict)) in repair.messages[-1]["content"]
    within(fake_openai, 700)
    rt.store.close()
