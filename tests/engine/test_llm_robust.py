"""The LLM path's robustness on the fake server (issue 23; issue 26 item 3): structured output in each
dialect, role budgets, repairs without the bad reply, degenerate replies refused, a bad reply costing a
turn and not the session, context overflow, bounded replies. Real client, real SQLite, real HTTP."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from engine.config import Budgets, Config, ModelConfig
from engine.interview.kernels import LLMKernel
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.judge.base import TurnView
from engine.llm import ContextOverflowError, JSONOutputError, LLMClient, LLMError, structured
from engine.llm.check import check_endpoint
from engine.runtime import Runtime
from tests.engine.interview_fixtures import RATINGS, make_bench, make_task_bench, script_target_only


class Answer(BaseModel):
    answer: str


@pytest.fixture(autouse=True)
def _fresh_dialects():
    structured.forget_all()
    yield
    structured.forget_all()


def formats(fake) -> list[str]:
    out = []
    for r in fake.chat_requests():
        fmt = r.body.get("response_format") or {}
        out.append(fmt.get("type", "none") + ("+schema" if "schema" in fmt else ""))
    return out


async def test_auto_steps_down_on_a_refused_format_and_remembers(store, endpoint, fake_openai):
    fake_openai.refuse_formats = {"json_schema"}
    fake_openai.default = '{"answer": "oxygen"}'
    client = LLMClient(store, endpoint, "judge")
    out = await client.json_result([{"role": "user", "content": "JSON"}], Answer)
    assert out.value.answer == "oxygen" and out.dialect == "json_object+schema"
    await client.json_result([{"role": "user", "content": "JSON again"}], Answer)
    # refused once, then the remembered rung straight away; the schema travels with it
    assert formats(fake_openai) == ["json_schema", "json_object+schema", "json_object+schema"]
    schema = fake_openai.chat_requests()[-1].body["response_format"]["schema"]
    assert schema == {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
                      "additionalProperties": False}


async def test_llama_cpp_500_refusal_is_not_retried_but_stepped_down(store, endpoint, fake_openai):
    fake_openai.refuse_formats, fake_openai.refuse_status = {"json_schema"}, 500
    fake_openai.default = '{"answer": "x"}'
    await LLMClient(store, endpoint, "judge").json_result([{"role": "user", "content": "JSON"}], Answer)
    assert formats(fake_openai) == ["json_schema", "json_object+schema"]


@pytest.mark.parametrize(("setting", "sent"), [("json_schema", "json_schema"), ("json_object", "json_object+schema"),
                                               ("off", "none")])
async def test_an_explicit_dialect_is_sent_as_set(store, endpoint, fake_openai, setting, sent):
    fake_openai.default = '{"answer": "x"}'
    client = LLMClient(store, endpoint.model_copy(update={"structured": setting}), "judge")
    await client.json_result([{"role": "user", "content": "JSON"}], Answer)
    assert formats(fake_openai) == [sent]


async def test_an_explicit_dialect_refused_is_an_error_not_a_silent_fallback(store, endpoint, fake_openai):
    fake_openai.refuse_formats = {"json_schema"}
    client = LLMClient(store, endpoint.model_copy(update={"structured": "json_schema"}), "judge")
    with pytest.raises(LLMError, match="response_format"):
        await client.json_result([{"role": "user", "content": "JSON"}], Answer)


async def test_role_budgets_are_sent_and_the_endpoint_wins(store, endpoint, fake_openai):
    fake_openai.default = json.dumps({"question": "What is new? (1)"})
    kernel = LLMKernel(store, endpoint, budgets=Budgets(kernel=77, judge=99))
    await kernel.next_question("follow-up", "oxygen", [], {}, [TurnView(0, "Q?", "A.", "initial")], "")
    assert fake_openai.chat_requests()[-1].body["max_tokens"] == 77
    assert kernel.judge.client._params({})["max_tokens"] == 99
    own = LLMKernel(store, endpoint.model_copy(update={"max_tokens": 12}), budgets=Budgets(kernel=77))
    assert own.kernel._params({})["max_tokens"] == 12
    assert Config().max_tokens.kernel > 0  # a default budget exists for every role


async def test_placeholders_and_examples_are_repaired_not_taken(store, endpoint, fake_openai):
    fake_openai.push('{"answer": "<the answer>"}', '{"answer": "An example."}', '{"answer": "oxygen"}')
    client = LLMClient(store, endpoint, "kernel")
    out = await client.json_result([{"role": "system", "content": 'Reply {"answer": "<the answer>"}'},
                                    {"role": "user", "content": "Which gas?"}], Answer, examples=["An example."])
    assert out.value.answer == "oxygen" and out.repairs == 2
    assert "placeholder '<the answer>'" in out.problems[0] and "example value" in out.problems[1]


async def test_a_repeated_question_is_a_repair(store, endpoint, fake_openai):
    fake_openai.push(json.dumps({"question": "What is the capital of France?"}),
                     json.dumps({"question": "Why is Paris the capital?"}))
    kernel = LLMKernel(store, endpoint)
    history = [TurnView(0, "What is the capital of France?", "Paris.", "initial")]
    question, _ = await kernel.next_question("follow-up", "geo", [], {}, history, "")
    assert question == "Why is Paris the capital?"
    assert "already asked" in fake_openai.chat_requests()[1].messages[-1]["content"]


async def test_ratings_in_schema_order_without_reasons_are_refused(store, endpoint, fake_openai):
    lazy = {"rationale": "", "accuracy": 1, "user_satisfaction": 2, "clarity": 3, "coherence": 4,
            "question_handling": 5, "challenge_handling": 6}
    fake_openai.default = json.dumps(lazy)
    kernel = LLMKernel(store, endpoint, repairs=1)
    with pytest.raises(JSONOutputError, match="rationale"):
        await kernel.judge.rate([("Q?", "A.", "initial")])
    fake_openai.default = json.dumps({**lazy, "rationale": "Two sentences of real reasons. Enough said."})
    with pytest.raises(JSONOutputError, match="1, 2, 3, 4, 5, 6"):
        await kernel.judge.rate([("Q2?", "A2.", "initial")])
    copied = {"rationale": "Real reasons, written for this conversation.", "accuracy": 7, "user_satisfaction": 6,
              "clarity": 8, "coherence": 7, "question_handling": 8, "challenge_handling": 4}
    fake_openai.default = json.dumps(copied)
    with pytest.raises(JSONOutputError, match="the example's"):
        await kernel.judge.rate([("Q3?", "A3.", "initial")])
    schema = fake_openai.chat_requests()[-1].body["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"])[0] == "rationale" and schema["properties"]["accuracy"]["enum"] == list(
        range(1, 11))


async def test_judge_schema_keys_verdicts_by_id_and_accepts_the_keyed_reply(store, endpoint, fake_openai):
    from engine.bench.model import Criterion

    fake_openai.default = json.dumps({"verdicts": {"c1": {"rationale": "Said so.", "in_answer": True, "met": True},
                                                   "c2": {"rationale": "Not said.", "in_answer": False,
                                                          "met": False}},
                                      "summary": "Oxygen is abundant."})
    criteria = [Criterion("c1", 0, "Oxygen is abundant"), Criterion("c2", 1, "Liquid oxygen is blue")]
    kernel = LLMKernel(store, endpoint)
    out = await kernel.judge.judge("Q?", criteria, "", "Oxygen is abundant.", None, [], "initial")
    assert {c: v.met for c, v in out.verdicts.items()} == {"c1": True, "c2": False}
    schema = fake_openai.chat_requests()[-1].body["response_format"]["json_schema"]["schema"]
    verdicts = schema["properties"]["verdicts"]
    assert verdicts["required"] == ["c1", "c2"] and verdicts["additionalProperties"] is False
    assert list(verdicts["properties"]["c1"]["properties"]) == ["rationale", "in_answer", "met"]


async def test_context_overflow_has_its_own_message(store, endpoint, fake_openai):
    fake_openai.context = 20
    with pytest.raises(ContextOverflowError, match="do not fit the model's context") as caught:
        await LLMClient(store, endpoint, "judge", max_tokens=64).chat([{"role": "user", "content": "hello"}])
    assert "base_url" not in str(caught.value)


async def test_a_prompt_is_trimmed_to_a_reported_context(store, endpoint, fake_openai):
    fake_openai.context = 1200
    fake_openai.default = json.dumps({"question": "Something new? (x)"})
    kernel = LLMKernel(store, endpoint, budgets=Budgets(kernel=100))
    long_answer = "word " * 800
    history = [TurnView(i, f"Question {i}?", long_answer, "follow-up") for i in range(6)]
    await kernel.next_question("follow-up", "t", [], {}, history, "")
    sent = fake_openai.chat_requests()[-1].messages[-1]["content"]
    assert "[turn 5," in sent and "[turn 0," not in sent  # the oldest turns went first
    assert await kernel.kernel.context_tokens() == 1200


# -- a bad reply costs a turn, not the session ----------------------------------------------------


@pytest.fixture
def runtime(home, endpoint):
    rt = Runtime(home=home, config=Config(kernel=endpoint))
    yield rt
    rt.store.close()


async def test_an_unusable_question_falls_back_to_the_offline_question_and_ratings_are_not_rated(runtime, fake_openai):
    """Issue 33: a kernel reply that cannot be a question is replaced by the offline kernel's question
    for the same state, noted as a fallback, so a weak kernel still examines."""
    from tests.engine.interview_fixtures import judge_reply

    script_target_only(fake_openai)
    fake_openai.rule("judge of an oral examination", judge_reply)
    fake_openai.rule("a FOLLOW-UP|a CHALLENGE", json.dumps({"question": ""}))
    fake_openai.rule("You rate an oral examination", json.dumps({**RATINGS, "rationale": ""}))
    make_bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[f"openai:t@{fake_openai.base_url}"],
                                          kernel="config", policy="always-follow-up", turns=3))
    # (follow-ups only: two follow-up calls in a row, so their repairs are given up; no last-turn pressure test)
    errors = await execute_run(runtime, run_id)
    [sid] = run_sessions(runtime, run_id)
    assert errors == {sid: None}
    row = runtime.store.one("SELECT status, score FROM sessions WHERE id = ?", (sid,))
    turns = runtime.store.query("SELECT idx, score FROM turns WHERE session_id = ?", (sid,))
    notes = [(e.payload["turn"], e.payload["what"]) for e in runtime.store.events(0, sid) if e.kind == "session.note"]
    assert row["status"] == "finished" and len(turns) == 3 and all(t["score"] is not None for t in turns)
    # each question: its call and one repair, answered with the same empty question (no second repair); after
    # two such calls in a row the session gives the kernel's question repairs up (said once)
    assert notes == [(1, "question-fallback"), (2, "repairs-given-up"), (2, "question-fallback"), (-1, "not-rated")]
    asking = [r for r in fake_openai.chat_requests() if "a FOLLOW-UP" in r.text or "a CHALLENGE" in r.text]
    assert len(asking) == 4
    asked = [r["question"] for r in runtime.store.query("SELECT question FROM turns WHERE session_id = ? ORDER BY idx",
                                                        (sid,))]
    assert all(q.strip() for q in asked) and len(set(asked)) == 3  # real questions, none asked twice
    rated = runtime.store.one("SELECT value, meta FROM metrics WHERE scope_id = ? AND name = 'rated'", (str(sid),))
    assert rated["value"] == 0.0 and "not rated" in json.loads(rated["meta"])["note"]
    # the session's report says so too: the notes in the JSON document and as a table (Markdown and HTML)
    from engine.report import build_session_report, render

    report = build_session_report(runtime.store, sid)
    assert [(n["turn"], n["what"]) for n in report.data["notes"]] == notes
    table = report.section("notes")
    assert [tuple(r[:2]) for r in table.rows] == [(1, "question fallback"), (2, "repairs given up"),
                                           (2, "question fallback"), ("session", "not rated")]
    assert "## Notes" in render(report, "md") and "repairs given up" in render(report, "html")


async def test_an_examiner_that_stops_first_examined_nothing(runtime, fake_openai):
    make_task_bench(runtime.store)
    fake_openai.rule("act as an examiner", "TASK_FINISHED")
    run_id = plan_run(runtime, RunRequest(bench="echo", targets=[f"openai:t@{fake_openai.base_url}"],
                                          kernel="config"))
    await execute_run(runtime, run_id)
    [sid] = run_sessions(runtime, run_id)
    row = runtime.store.one("SELECT status, score FROM sessions WHERE id = ?", (sid,))
    notes = [e.payload for e in runtime.store.events(0, sid) if e.kind == "session.note"]
    assert row["status"] == "not_examined" and row["score"] is None and [n["what"] for n in notes] == ["not-examined"]
    examiner = [r for r in fake_openai.chat_requests() if "act as an examiner" in r.text]
    assert len(examiner) == 3 and "You have not sent the task request yet" in examiner[1].messages[-1]["content"]
    assert not any("judge of an agent" in r.text for r in fake_openai.chat_requests())  # nothing was judged
    from engine.metrics.sessions import target_table

    [figures] = target_table(runtime.store, [sid])
    assert figures["not_examined"] == [sid] and figures["cannot_judge_turns"] == 0


# -- bounded replies (issue 26 item 3) --------------------------------------------------------------


async def test_an_endless_stream_is_cut_at_the_call_deadline(store, fake_openai):
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", max_call_seconds=0.5, timeout=5)
    fake_openai.default = {"endless": True, "token_delay": 0.001}
    result = await LLMClient(store, endpoint, "target").chat([{"role": "user", "content": "go"}], stream=True)
    assert result.truncated and result.finish_reason == "truncated" and result.text.startswith("more")


async def test_a_huge_reply_is_cut_and_a_cut_json_reply_is_a_repair(store, fake_openai):
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", max_reply_chars=100)
    fake_openai.push(json.dumps({"answer": "x" * 5000}), '{"answer": "short"}')
    client = LLMClient(store, endpoint, "judge")
    out = await client.json_result([{"role": "user", "content": "JSON"}], Answer)
    assert out.value.answer == "short" and "cut at the endpoint's size" in out.problems[0]
    fake_openai.default = {"content": "y" * 5000}
    streamed = await client.chat([{"role": "user", "content": "stream"}], stream=True)
    assert len(streamed.text) == 100 and streamed.truncated


async def test_two_disagreeing_verdicts_in_one_reply_are_a_repair(store, endpoint, fake_openai):
    fake_openai.push('{"answer": "yes"} and on reflection {"answer": "no"}', '{"answer": "no"}')
    out = await LLMClient(store, endpoint, "judge").json_result([{"role": "user", "content": "JSON"}], Answer)
    assert out.repairs == 1 and "disagree" in out.problems[0]


async def test_deep_nesting_and_non_utf8_are_one_line_errors(store, endpoint, fake_openai):
    fake_openai.push('{"answer": ' + "[" * 90_000 + "]" * 90_000 + "}", '{"answer": "ok"}')
    out = await LLMClient(store, endpoint, "judge").json_result([{"role": "user", "content": "JSON"}], Answer)
    assert out.value.answer == "ok" and "nested deeper than" in out.problems[0]
    fake_openai.default = {"raw": b'{"choices": [{"message": {"content": "\xff\xfe"}}]}'}
    with pytest.raises(LLMError) as caught:
        await LLMClient(store, endpoint, "judge").chat([{"role": "user", "content": "bytes"}])
    assert "\n" not in str(caught.value)


# -- viva check ---------------------------------------------------------------------------------------


def test_check_reports_dialect_usage_streaming_and_context(fake_openai):
    fake_openai.refuse_formats, fake_openai.context = {"json_schema"}, 8192
    fake_openai.default = '{"ok": true}'
    report = asyncio.run(check_endpoint(ModelConfig(base_url=fake_openai.base_url, model="fake-model")))
    assert report.reachable and report.models == ["fake-model"]
    assert report.structured == "json_object+schema" and report.structured_valid is True
    assert report.refused[0].startswith("json_schema: HTTP 400")
    assert (report.usage, report.streaming, report.stream_usage) == (True, True, True)
    assert (report.context, report.context_source) == (8192, "/models")
    assert any(line.startswith("structured output: json_object+schema") for line in report.lines())


def test_check_an_unreachable_endpoint_says_so():
    report = asyncio.run(check_endpoint(ModelConfig(base_url="http://127.0.0.1:9/v1", timeout=2)))
    assert not report.reachable and "failed" in report.notes[0]


def test_viva_check_cli(fake_openai, home):
    from click.testing import CliRunner

    from tui.cli import main

    fake_openai.default = '{"ok": true}'
    result = CliRunner().invoke(main, ["--home", str(home), "check", f"openai:fake-model@{fake_openai.base_url}"])
    assert result.exit_code == 0, result.output
    assert "structured output: json_schema" in result.output and "streaming: yes" in result.output
    bad = CliRunner().invoke(main, ["--home", str(home), "check", "nonsense"])
    assert bad.exit_code == 1 and "unknown target 'nonsense'" in bad.output


async def test_feedback_quotes_answers_with_a_derived_nonce_so_no_word_is_deleted(store, endpoint, fake_openai):
    """The feedback prompt's markers used the fixed nonce "feedback", which the sanitiser then deleted from
    the answers ("Good feedback loops" became "Good  loops")."""
    from engine.judge.feedback import FeedbackRecord

    fake_openai.default = json.dumps({"flaws_knowledge": "Gaps on loops.", "flaws_capability": "Rushes.",
                                      "comprehensive_performance": "One of one.",
                                      "suggestions": "Reread the question before answering."})
    records = [FeedbackRecord("What helps a team learn?", "feedback loops", "Good feedback loops", True, "easy")]
    kernel = LLMKernel(store, endpoint)
    await kernel.graded_feedback(records, [{"gold": "x", "options": None}])
    sent = fake_openai.chat_requests()[-1].messages[-1]["content"]
    assert "Good feedback loops" in sent and "<<<ANSWER feedback>>>" not in sent
