"""The LLM client against the real local fake server, through the real openai client."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from engine.config import ModelConfig
from engine.llm import JSONOutputError, LLMClient, LLMError
from engine.runtime import setup_logging
from engine.store.texts import request_of, response_of


class Answer(BaseModel):
    answer: str
    confidence: float


async def test_chat_records_call_with_tokens_and_cost(store, endpoint, fake_openai):
    fake_openai.push("Oxygen is the most abundant element in the crust.")
    client = LLMClient(store, endpoint, role="target")
    result = await client.chat([{"role": "user", "content": "What is most abundant?"}])
    assert result.text.startswith("Oxygen")
    assert result.tokens_in > 0 and result.tokens_out > 0
    row = store.one("SELECT * FROM llm_calls WHERE id = ?", (result.call_id,))
    assert row["role"] == "target" and row["error"] is None and row["cached"] == 0
    assert response_of(store, result.call_id) == {"text": result.text, "finish_reason": "stop"}
    assert request_of(store, result.call_id)["messages"] == [{"role": "user", "content": "What is most abundant?"}]
    assert row["cost"] == pytest.approx(result.tokens_in / 1e6 * 1.0 + result.tokens_out / 1e6 * 2.0)


async def test_other_servers_response_shapes(store, endpoint, fake_openai):
    """Responses are read as plain JSON: content given as a list of parts, a missing usage and a
    missing finish reason are read as such; a response without choices is a clear error."""
    fake_openai.push(
        {"body": {"choices": [{"message": {"role": "assistant", "content": [
            {"type": "text", "text": "Oxygen "}, {"type": "image_url"}, {"type": "text", "text": "is 21%."}]}}]}},
        {"body": {"choices": [{"message": {"content": None}, "finish_reason": "length"}],
                  "usage": {"prompt_tokens": 7, "completion_tokens": "many"}}},
        {"body": {"id": "x", "choices": []}},
    )
    client = LLMClient(store, endpoint, role="target", use_cache=False)
    first = await client.chat([{"role": "user", "content": "How much oxygen is in air?"}])
    assert (first.text, first.tokens_in, first.tokens_out, first.finish_reason) == ("Oxygen is 21%.", 0, 0, None)
    assert first.usage_unknown  # no usage: the 0s are "unknown", and recorded so
    second = await client.chat([{"role": "user", "content": "Again?"}])
    assert (second.text, second.tokens_in, second.tokens_out, second.finish_reason) == ("", 7, 0, "length")
    assert not second.usage_unknown
    assert [r["usage_unknown"] for r in store.query("SELECT usage_unknown FROM llm_calls ORDER BY id")] == [1, 0]
    with pytest.raises(LLMError, match="returned no choices"):
        await client.chat([{"role": "user", "content": "Once more?"}])


async def test_malformed_json_is_repaired_once(store, endpoint, fake_openai):
    fake_openai.push('{"answer": "oxygen", "confidence": ', '{"answer": "oxygen", "confidence": 0.9}')
    client = LLMClient(store, endpoint, role="judge")
    out = await client.json_result([{"role": "user", "content": "Reply in JSON."}], Answer)
    assert out.value == Answer(answer="oxygen", confidence=0.9)
    assert out.repairs == 1
    second = fake_openai.chat_requests()[1].messages
    # the repair re-sends the prompt with the problem and the schema, never the bad reply itself
    assert [m["role"] for m in second] == ["user", "user"] and "could not be used" in second[-1]["content"]
    assert '"confidence"' in second[-1]["content"]


async def test_json_gives_up_after_bounded_repairs(store, endpoint, fake_openai):
    fake_openai.push("not json at all", "still not json", "nor is this")
    client = LLMClient(store, endpoint, role="judge")
    with pytest.raises(JSONOutputError, match="after 2 repair"):
        await client.json([{"role": "user", "content": "JSON please"}], Answer, max_repairs=2)
    assert fake_openai.count() == 3


async def test_a_repair_answered_with_the_same_reply_is_not_repaired_again(store, endpoint, fake_openai):
    """The model did not act on the repair: a second repair would only cost a call."""
    fake_openai.push('{"answer": "c9", "confidence": 1}', 'Sure: {\n  "confidence": 1.0,\n  "answer": "c9"\n}')
    client = LLMClient(store, endpoint, role="judge", use_cache=False)
    check = lambda v: None if v.answer == "c1" else f"unknown id {v.answer}"  # noqa: E731
    with pytest.raises(JSONOutputError, match=r"after 1 repair\(s\): unknown id c9 \(the last repair was answered "
                                              "with the same reply"):
        await client.json([{"role": "user", "content": "pick"}], Answer, max_repairs=2, validate=check)
    assert fake_openai.count() == 2  # the same object, laid out otherwise: not repaired again
    # the same text with no object in it (a proxy's error page, a cut reply) is repaired as before
    fake_openai.default = "<html>502 Bad Gateway</html>"
    with pytest.raises(JSONOutputError, match=r"after 2 repair\(s\)"):
        await client.json([{"role": "user", "content": "pick"}], Answer, max_repairs=2, validate=check)
    assert fake_openai.count() == 5


def _notes(store, what):
    return [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind = 'session.note'")
            if json.loads(r["payload"])["what"] == what]


async def test_a_sessions_repairs_of_a_call_are_given_up_after_failing_in_a_row(store, endpoint, fake_openai):
    """After FUTILE_ROUNDS calls of one kind whose repairs all failed, that kind is not repaired again in the
    session (said once in a note); another kind still is, a repair that works resets the count, and a
    session-less client (judge check) keeps every repair."""
    from engine.interview.runner import create_session
    from engine.interview.session import SessionSpec
    from engine.llm.client import FUTILE_ROUNDS
    from tests.engine.interview_fixtures import make_bench

    [item] = make_bench(store)
    first, second = (create_session(store, SessionSpec(item, "t", "config")) for _ in range(2))
    # a different unusable object each time (no confidence): each repair is sent, and none works
    bad = iter(json.dumps({"answer": f"take {i}"}) for i in range(100))
    fake_openai.default = lambda body: next(bad)
    client = LLMClient(store, endpoint, role="kernel", session_id=first, use_cache=False)
    ask = [{"role": "user", "content": "a question in JSON"}]
    for _ in range(FUTILE_ROUNDS):
        with pytest.raises(JSONOutputError, match="after 2 repair"):
            await client.json_result(ask, Answer, call="follow-up question")
    assert fake_openai.count() == 3 * FUTILE_ROUNDS
    assert len(_notes(store, "repairs-given-up")) == 1
    assert "follow-up question repairs given up" in _notes(store, "repairs-given-up")[0]["text"]
    with pytest.raises(JSONOutputError, match="after 0 repair.*given up for this session"):
        await client.json_result(ask, Answer, call="follow-up question")
    assert fake_openai.count() == 3 * FUTILE_ROUNDS + 1  # one call, no repair
    fake_openai.push('{"answer": "oxygen", "confidence": 0.9}')
    assert (await client.json_result(ask, Answer, call="follow-up question")).value.answer == "oxygen"
    with pytest.raises(JSONOutputError, match="after 2 repair"):  # another kind of call: still repaired
        await client.json_result(ask, Answer, call="challenge question")
    assert len(_notes(store, "repairs-given-up")) == 1

    # a repair that works resets the count: one failed round, a repaired one, one failed round: not given up
    fresh = LLMClient(store, endpoint, role="judge", session_id=second, use_cache=False)
    with pytest.raises(JSONOutputError, match="after 2 repair"):
        await fresh.json_result(ask, Answer, call="judge")
    fake_openai.push("broken", '{"answer": "oxygen", "confidence": 0.9}')
    assert (await fresh.json_result(ask, Answer, call="judge")).repairs == 1
    with pytest.raises(JSONOutputError, match="after 2 repair"):
        await fresh.json_result(ask, Answer, call="judge")
    with pytest.raises(JSONOutputError, match="after 2 repair"):  # the second failed round in a row
        await fresh.json_result(ask, Answer, call="judge")
    with pytest.raises(JSONOutputError, match="after 0 repair"):
        await fresh.json_result(ask, Answer, call="judge")

    # replies with no JSON object at all (prose, or garbled on the way) say nothing of repairs: never given up
    prose = iter(f"Oxygen, I think ({i})." for i in range(100))
    fake_openai.default = lambda body: next(prose)
    for _ in range(FUTILE_ROUNDS + 1):
        with pytest.raises(JSONOutputError, match="after 2 repair"):
            await client.json_result(ask, Answer, call="ratings")
    fake_openai.default = lambda body: next(bad)

    # no session: every call keeps its repairs
    unbound = LLMClient(store, endpoint, role="judge", use_cache=False)
    for _ in range(FUTILE_ROUNDS + 1):
        with pytest.raises(JSONOutputError, match="after 2 repair"):
            await unbound.json_result(ask, Answer, call="judge")


async def test_json_custom_validation_is_reasked(store, endpoint, fake_openai):
    fake_openai.push('{"answer": "c9", "confidence": 1}', '{"answer": "c1", "confidence": 1}')
    client = LLMClient(store, endpoint, role="judge")
    value = await client.json([{"role": "user", "content": "pick"}], Answer,
                              validate=lambda v: None if v.answer == "c1" else f"unknown id {v.answer}")
    assert value.answer == "c1"
    assert "unknown id c9" in fake_openai.chat_requests()[1].messages[-1]["content"]


async def test_429_retry_after_is_honoured_and_recorded(store, endpoint, fake_openai):
    fake_openai.push({"status": 429, "retry_after": 1}, "fine now")
    client = LLMClient(store, endpoint, role="kernel")
    result = await client.chat([{"role": "user", "content": "hello"}])
    assert result.text == "fine now" and result.attempts == 2
    first, second = fake_openai.chat_requests()
    assert second.time - first.time >= 1.0  # the server saw the retry only after Retry-After
    row = store.one("SELECT attempts, retries FROM llm_calls WHERE id = ?", (result.call_id,))
    retries = json.loads(row["retries"])
    assert row["attempts"] == 2 and retries[0]["status"] == 429 and retries[0]["wait"] == 1.0


async def test_persistent_500_names_endpoint_and_status(store, fake_openai):
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", max_retries=2, timeout=5)
    fake_openai.default = {"status": 500, "retry_after": 0, "message": "boom"}
    client = LLMClient(store, endpoint, role="target")
    with pytest.raises(LLMError) as info:
        await client.chat([{"role": "user", "content": "hi"}])
    message = str(info.value)
    assert fake_openai.base_url in message and "HTTP 500" in message and "3 attempt" in message
    assert fake_openai.count() == 3
    assert store.one("SELECT error FROM llm_calls")["error"] == message


async def test_client_error_is_not_retried(store, endpoint, fake_openai):
    fake_openai.default = {"status": 401, "message": "bad key"}
    with pytest.raises(LLMError, match="HTTP 401"):
        await LLMClient(store, endpoint, role="target").chat([{"role": "user", "content": "hi"}])
    assert fake_openai.count() == 1


def _own_address() -> str | None:
    """This machine's first non-loopback address (the fake server bound there is a "remote" endpoint)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(("192.0.2.254", 9))  # no packet is sent: this only picks the outgoing interface
            address = sock.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


async def test_timeout_is_retried_on_a_remote_endpoint(store):
    from tests.fakes.openai_server import FakeOpenAI

    address = _own_address()
    if address is None:
        pytest.skip("no non-loopback address on this machine")
    with FakeOpenAI(host=address) as fake:
        endpoint = ModelConfig(base_url=fake.base_url, model="m", max_retries=2,
                               timeout=0.5)
        assert not endpoint.loopback
        fake.push({"content": "late", "delay": 1.5}, "on time")
        result = await LLMClient(store, endpoint, role="target").chat([{"role": "user", "content": "hi"}])
    assert result.text == "on time" and result.attempts == 2


async def test_timeout_is_not_resent_to_a_loopback_server(store, fake_openai):
    """A local server keeps computing a call its client gave up on: a second copy would queue behind it."""
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", max_retries=2, timeout=0.5)
    assert endpoint.loopback and ModelConfig(base_url=fake_openai.base_url).call_timeout == 600.0
    fake_openai.push({"content": "late", "delay": 1.5}, "on time")
    with pytest.raises(LLMError, match="not sent again"):
        await LLMClient(store, endpoint, role="target").chat([{"role": "user", "content": "hi"}])
    assert fake_openai.count() == 1


async def test_identical_call_is_served_from_cache(store, endpoint, fake_openai):
    fake_openai.default = "cached answer"
    client = LLMClient(store, endpoint, role="kernel")
    messages = [{"role": "user", "content": "same question"}]
    first = await client.chat(messages)
    second = await client.chat(messages)
    assert fake_openai.count() == 1
    assert second.cached and second.text == first.text and second.tokens_out == first.tokens_out
    await client.chat(messages, temperature=0.7)  # different parameters: a new request
    assert fake_openai.count() == 2
    await LLMClient(store, endpoint, role="kernel", use_cache=False).chat(messages)
    assert fake_openai.count() == 3


async def test_streaming_delivers_tokens_and_retries_truncated_stream(store, endpoint, fake_openai):
    text = "one two three four five six"
    fake_openai.push({"content": text, "truncate": True}, text)
    pieces: list[str] = []
    resets: list[int] = []
    client = LLMClient(store, endpoint, role="target")
    result = await client.chat([{"role": "user", "content": "count"}], stream=True,
                               on_token=pieces.append, on_reset=lambda: (resets.append(1), pieces.clear()))
    assert result.text == text and "".join(pieces) == text
    assert resets == [1] and result.attempts == 2 and result.tokens_out > 0


async def test_streamed_call_reads_usage_from_the_last_chunk(store, endpoint, fake_openai):
    """A stream asks for usage (``stream_options.include_usage``) and records the server's counts."""
    fake_openai.push("one two three")
    client = LLMClient(store, endpoint, role="target", use_cache=False)
    prompt = [{"role": "user", "content": "count to three please"}]
    result = await client.chat(prompt, stream=True)
    assert fake_openai.chat_requests()[0].body["stream_options"] == {"include_usage": True}
    # the fake counts words and punctuation: 4 in the prompt, 3 in the answer
    assert (result.tokens_in, result.tokens_out, result.usage_unknown) == (4, 3, False)
    row = store.one("SELECT tokens_in, tokens_out, usage_unknown FROM llm_calls WHERE id = ?", (result.call_id,))
    assert dict(row) == {"tokens_in": 4, "tokens_out": 3, "usage_unknown": 0}


async def test_stream_without_usage_is_recorded_unknown_not_estimated(store, endpoint, fake_openai):
    """llama-cpp-python sends no usage in streams: the counts are unknown (flagged), not a made-up number,
    and a cache hit of that call stays unknown."""
    fake_openai.stream_usage = False
    fake_openai.push("one two three")
    client = LLMClient(store, endpoint, role="target")
    prompt = [{"role": "user", "content": "count"}]
    result = await client.chat(prompt, stream=True)
    assert (result.text, result.tokens_in, result.tokens_out, result.usage_unknown) == ("one two three", 0, 0, True)
    hit = await client.chat(prompt, stream=True)
    assert hit.cached and hit.usage_unknown
    assert [r["usage_unknown"] for r in store.query("SELECT usage_unknown FROM llm_calls ORDER BY id")] == [1, 1]


async def test_server_refusing_stream_options_is_asked_again_without(store, endpoint, fake_openai):
    """A 400 naming ``stream_options`` steps down (like the structured-output dialects): the stream is sent
    again without it, the endpoint is remembered, and the call is not a failure."""
    fake_openai.refuse_stream_options = True
    fake_openai.push("one two", "three four")
    client = LLMClient(store, endpoint, role="target", use_cache=False)
    first = await client.chat([{"role": "user", "content": "a"}], stream=True)
    second = await client.chat([{"role": "user", "content": "b"}], stream=True)
    assert (first.text, second.text) == ("one two", "three four")
    assert first.usage_unknown and second.usage_unknown and first.attempts == 1
    sent = ["stream_options" in r.body for r in fake_openai.chat_requests()]
    assert sent == [True, False, False]  # refused once, then never sent again to this endpoint
    assert store.one("SELECT COUNT(*) AS n FROM llm_calls WHERE error IS NOT NULL")["n"] == 0


async def test_api_key_never_stored_or_logged(home, store, fake_openai, monkeypatch):
    secret = "sk-test-SECRET-6f1d2c9a8b7e"
    monkeypatch.setenv("VIVA_TEST_KEY", secret)
    setup_logging(home)
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", api_key_env="VIVA_TEST_KEY",
                           max_retries=1, timeout=5)
    fake_openai.push("ok", {"status": 500, "retry_after": 0}, {"status": 500, "retry_after": 0})
    client = LLMClient(store, endpoint, role="target")
    await client.chat([{"role": "user", "content": "hi"}])
    with pytest.raises(LLMError):
        await client.chat([{"role": "user", "content": "again"}])
    # the server did receive it, so the test would notice a key that never left
    assert fake_openai.chat_requests()[0].headers["authorization"] == f"Bearer {secret}"
    store.conn.execute("PRAGMA wal_checkpoint(FULL)")
    for path in list(home.rglob("*")):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert (home / "logs" / "viva.log").read_text()  # something was logged


async def test_missing_key_variable_is_a_clear_error(store, fake_openai, monkeypatch):
    monkeypatch.delenv("VIVA_ABSENT_KEY", raising=False)
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", api_key_env="VIVA_ABSENT_KEY")
    from engine.config import ConfigError

    with pytest.raises(ConfigError, match="VIVA_ABSENT_KEY is not set"):
        await LLMClient(store, endpoint, role="kernel").chat([{"role": "user", "content": "x"}])


async def test_session_figures_say_unknown_when_a_call_had_no_counts(store, endpoint, fake_openai):
    """A session one of whose calls had no counts shows its tokens as unknown (None, and the report's
    rows say "unknown"), not as the undercounted sum; a session whose calls all had counts keeps them."""
    from engine.metrics.breakdown import run_totals
    from engine.metrics.sessions import session_metrics

    fake_openai.push("one two three", "four five")
    await LLMClient(store, endpoint, role="target", session_id=1, use_cache=False).chat(
        [{"role": "user", "content": "a"}], stream=True)
    fake_openai.stream_usage = False
    await LLMClient(store, endpoint, role="target", session_id=2, use_cache=False).chat(
        [{"role": "user", "content": "b"}], stream=True)
    counted, uncounted = session_metrics(store, 1), session_metrics(store, 2)
    assert (counted["tokens_in"], counted["tokens_out"], counted.get("tokens_unknown")) == (0, 0, None)  # no turns stored
    assert (uncounted["tokens_in"], uncounted["tokens_out"], uncounted["tokens_unknown"]) == (None, None, 1)
    assert "tokens_unknown" not in run_totals(store, [1]) and run_totals(store, [1])["tokens_in"] == 0
    both = run_totals(store, [1, 2])
    assert (both["tokens_in"], both["tokens_out"], both["tokens_unknown"]) == (None, None, 1)


async def test_concurrent_calls_spread_over_lanes_of_bounded_size(store, endpoint, fake_openai):
    """httpcore re-examines every connection of its pool at each request: a pool per :data:`LANE` requests
    in flight keeps that bounded. A lone caller stays on the first client; 3 x LANE calls at once open three
    clients, none ever holding more than LANE requests, and every call is answered."""
    import asyncio

    from engine.llm import transport

    fake_openai.rule("lane", lambda body: {"content": "ok", "delay": 0.3})
    lanes_seen: list[int] = []
    peak: list[int] = []
    client = LLMClient(store, endpoint.model_copy(update={"max_concurrency": 64}), role="judge", use_cache=False)

    async def one(i: int) -> str:
        result = await client.chat([{"role": "user", "content": f"lane {i}"}])
        return result.text

    assert await one(0) == "ok"
    lanes = transport._lanes(client.endpoint, client.endpoint.api_key())
    assert len(lanes.clients) == 1 and lanes.busy == [0]

    async def watch() -> None:
        while True:
            lanes_seen.append(len(lanes.clients))
            peak.append(max(lanes.busy))
            await asyncio.sleep(0.02)

    watcher = asyncio.create_task(watch())
    texts = await asyncio.gather(*(one(i) for i in range(1, 3 * transport.LANE + 1)))
    watcher.cancel()
    assert texts == ["ok"] * (3 * transport.LANE)
    assert len(lanes.clients) == 3 and lanes.busy == [0, 0, 0]
    assert max(peak) == transport.LANE  # full lanes, never over
    assert await one(99) == "ok" and len(lanes.clients) == 3  # idle again: no new client
