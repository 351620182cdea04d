"""The redaction choke point: what it removes, what it keeps, and each place it is wired in."""

from __future__ import annotations

import io
import json
import logging
import random

import pytest

from engine import redact as R
from engine.config import ConfigError, ModelConfig, check_api_key_env, load_config, load_yaml
from engine.llm import JSONOutputError, LLMClient, LLMError
from engine.runtime import setup_logging

KEY = "sk-live-Qm7xT2vLp9RkW4nZc8YbJ3sHd6Fa1Ue5"  # key-shaped
PLAIN_KEY = "Zx9Qw8Er7Ty6Ui5Op4AsDf3Gh"  # no known prefix: found only because it is registered


@pytest.fixture(autouse=True)
def fresh_registry():
    R.clear()
    yield
    R.clear()


def test_registered_values_and_key_shaped_tokens_are_removed():
    R.register_secret(PLAIN_KEY)
    cases = {
        f"my key is {PLAIN_KEY}, keep it": "my key is [REDACTED], keep it",
        f"upstream said: invalid key {KEY}.": "upstream said: invalid key [REDACTED].",
        "Authorization: Bearer abc123def456ghi789jkl": "Authorization: Bearer [REDACTED]",
        '{"api_key": "Pq8Rs7Tu6Vw5Xy4Za3Bc"}': '{"api_key": "[REDACTED]"}',
        "https://x.test/v1?token=Ab12Cd34Ef56Gh78Ij90&x=1": "https://x.test/v1?token=[REDACTED]&x=1",
        "OPENAI_API_KEY=Pq8Rs7Tu6Vw5Xy4Za3Bc": "OPENAI_API_KEY=[REDACTED]",
        "hf_" + "aB3" * 12: "[REDACTED]",
        "AKIAIOSFODNN7EXAMPLE in a log": "[REDACTED] in a log",
    }
    for text, expected in cases.items():
        assert R.redact(text) == expected, text


def test_a_remembered_text_is_redacted_again_once_a_secret_is_registered():
    text = f"the server said: unauthorised ({PLAIN_KEY})"
    assert R.redact(text) == text  # not key-shaped: kept, and remembered
    assert R.redact(text) == text
    R.register_secret(PLAIN_KEY)
    assert R.redact(text) == "the server said: unauthorised ([REDACTED])"
    R.clear()
    assert R.redact(text) == text


def test_the_memo_gives_what_a_fresh_redaction_gives():
    rng = random.Random(3)
    pieces = ["api_key=", KEY, " Bearer ", PLAIN_KEY, "ghp_" + "a1" * 20, " token: ", "though high", " the key is "]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(300)]
    R.register_secret(PLAIN_KEY)
    first = [R.redact(t) for t in texts]
    again = [R.redact(t) for t in texts]  # from the memo
    assert again == first == [R._redact(t) for t in texts]
    assert any(PLAIN_KEY in t for t in texts) and not any(PLAIN_KEY in t for t in again)


def test_the_memo_is_bounded_in_characters():
    long = "a plain sentence about oxygen. " * (R.MEMO_TEXT_CHARS // 20)
    assert R.redact(long) == long and long not in R._memo  # too long to be remembered
    for i in range(4 * R.MEMO_CHARS // 100):
        R.redact(f"{i:06d} " + "x" * 93)
    assert 0 < R._memo_chars <= R.MEMO_CHARS
    assert R._memo_chars == sum(len(k) + (len(v) if v is not k else 0) for k, v in R._memo.items())


def test_ordinary_text_hashes_and_ids_are_kept():
    keep = [
        "Liquid oxygen is pale blue; the key ingredient is photosynthesis.",
        '{"cache_key": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}',
        "token usage: 12345 in, 678 out",
        "pip install sk-learn-compatible-estimators",
        "session 550e8400-e29b-41d4-a716-446655440000 finished",
        "Bearer of bad news",
    ]
    for text in keep:
        assert R.redact(text) == text


def test_short_values_are_not_registered():
    assert not R.register_secret("abc")
    assert R.redact("abc abc") == "abc abc"


def test_a_streamed_key_never_reaches_the_listener_in_pieces():
    R.register_secret(PLAIN_KEY)
    text = (f"Sure. The key is {PLAIN_KEY} and also api_key = {KEY[3:]} plus Authorization: Bearer "
            f"{KEY} -- done.")
    rng = random.Random(5)
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 40)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        stream = R.StreamRedactor()
        shown = [stream.feed(p) for p in pieces] + [stream.flush()]
        joined = "".join(shown)
        assert joined == R.redact(text)
        for piece in shown:  # no piece carries any 6-character run of a key
            for secret in (PLAIN_KEY, KEY, KEY[3:]):
                assert not any(secret[i:i + 6] in piece for i in range(len(secret) - 5))


def test_log_filter_redacts_message_args_and_traceback(tmp_path):
    R.register_secret(PLAIN_KEY)
    setup_logging(tmp_path)
    log = logging.getLogger("viva.test")
    log.warning("retry because %s", f"body echoed {PLAIN_KEY}")
    try:
        raise RuntimeError(f"boom {PLAIN_KEY}")
    except RuntimeError:
        log.exception("failed")
    for h in logging.getLogger("viva").handlers:
        h.flush()
    text = (tmp_path / "logs" / "viva.log").read_text()
    assert PLAIN_KEY not in text and text.count("[REDACTED]") == 2 and "RuntimeError: boom [REDACTED]" in text


def test_std_streams_are_redacted_inside_the_context():
    R.register_secret(PLAIN_KEY)
    buf = io.StringIO()
    stream = R.RedactingStream(buf)
    print(f"error: {PLAIN_KEY}", file=stream)
    assert buf.getvalue() == "error: [REDACTED]\n"
    with pytest.raises(TypeError):
        stream.write(b"bytes are not text")


def test_store_redacts_text_columns_and_event_payloads_in_place(store):
    R.register_secret(PLAIN_KEY)
    run = store.insert("runs", {"created_at": "t", "config": json.dumps({"note": PLAIN_KEY}), "status": "created"})
    store.update("runs", run, {"status": f"failed: {PLAIN_KEY}"})
    payload = {"error": f"HTTP 500: {PLAIN_KEY}", "nested": [{"text": KEY}], "n": 3}
    store.append_event(None, "session.failed", payload)
    assert payload == {"error": "HTTP 500: [REDACTED]", "nested": [{"text": "[REDACTED]"}], "n": 3}
    row = store.one("SELECT config, status FROM runs WHERE id = ?", (run,))
    assert PLAIN_KEY not in row["config"] and row["status"] == "failed: [REDACTED]"
    assert store.events()[-1].payload == payload


def test_config_never_echoes_a_key(tmp_path):
    cfg = tmp_path / "viva.yaml"
    cfg.write_text(f"kernel:\n  model: m\n  api_key: {PLAIN_KEY}\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert PLAIN_KEY not in str(info.value) and "api_key_env" in str(info.value)
    assert "kernel.api_key" in str(info.value)
    assert R.redact(PLAIN_KEY) == "[REDACTED]"  # registered: redacted wherever it could still travel
    R.clear()
    cfg.write_text(f"targets:\n  t:\n    api_key_env: {KEY}\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert KEY not in str(info.value) and "looks like an API key" in str(info.value)
    cfg.write_text("kernel:\n  max_tokens: -5\n")  # an ordinary field still shows its value
    with pytest.raises(ConfigError, match=r"kernel.max_tokens: .*got -5"):
        load_config(cfg)


def test_api_key_env_given_a_key_is_refused_without_printing_it(monkeypatch):
    for value in (KEY, PLAIN_KEY, "my-key-var"):
        with pytest.raises(ConfigError) as info:
            check_api_key_env(value, "--api-key-env")
        assert value not in str(info.value) and str(info.value).startswith("--api-key-env: ")
    check_api_key_env("OPENAI_API_KEY", "--api-key-env")
    endpoint = ModelConfig().model_copy(update={"api_key_env": PLAIN_KEY})  # as --api-key-env does
    with pytest.raises(ConfigError) as info:
        endpoint.api_key()
    assert PLAIN_KEY not in str(info.value)
    monkeypatch.setenv("VIVA_T_KEY", PLAIN_KEY)
    R.clear()
    assert ModelConfig(api_key_env="VIVA_T_KEY").api_key() == PLAIN_KEY
    assert R.redact(PLAIN_KEY) == "[REDACTED]"  # reading a key registers it


def test_duplicate_yaml_keys_are_refused_with_file_and_line(tmp_path):
    cfg = tmp_path / "viva.yaml"
    cfg.write_text("interview:\n  turns: 4\n  seed: 1\n  turns: 9\n")
    with pytest.raises(ConfigError, match=r"viva.yaml:4: duplicate key 'turns' \(first given at line 2\)"):
        load_config(cfg)
    merged = load_yaml("base: &b {turns: 3, seed: 2}\ninterview:\n  <<: *b\n  turns: 4\n", "f.yaml")
    assert merged["interview"] == {"turns": 4, "seed": 2}  # a merged key may be overridden
    with pytest.raises(ValueError, match=r"f.yaml:3: duplicate key 'a'"):
        load_yaml("x:\n  - a: 1\n    a: 2\n", "f.yaml")


async def test_a_500_echoing_the_key_leaves_no_key_in_retries_error_or_log(store, home, fake_openai, monkeypatch):
    monkeypatch.setenv("VIVA_T_KEY", PLAIN_KEY)
    setup_logging(home)
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", api_key_env="VIVA_T_KEY", max_retries=1,
                           timeout=5)
    # the key straddles the 200-character cut of retry reasons: redaction must come first
    body = "x" * 185 + f" Incorrect API key provided: {PLAIN_KEY}"
    fake_openai.default = {"status": 500, "retry_after": 0, "message": body}
    with pytest.raises(LLMError) as info:
        await LLMClient(store, endpoint, "target").chat([{"role": "user", "content": "hi"}])
    assert PLAIN_KEY[:6] not in str(info.value)
    row = store.one("SELECT error, retries FROM llm_calls")
    assert all(PLAIN_KEY[:6] not in (row[c] or "") for c in ("error", "retries"))
    assert fake_openai.chat_requests()[0].headers["authorization"] == f"Bearer {PLAIN_KEY}"  # it was sent
    for h in logging.getLogger("viva").handlers:
        h.flush()
    assert PLAIN_KEY[:6] not in (home / "logs" / "viva.log").read_text()


async def test_a_judge_that_echoes_the_key_gives_a_redacted_json_error(store, fake_openai, monkeypatch):
    monkeypatch.setenv("VIVA_T_KEY", PLAIN_KEY)
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", api_key_env="VIVA_T_KEY", timeout=5)
    fake_openai.default = "x" * 100 + f" my key is {PLAIN_KEY} {{"  # the key straddles the 120-char cut

    class Out(__import__("pydantic").BaseModel):
        ok: bool

    with pytest.raises(JSONOutputError) as info:
        await LLMClient(store, endpoint, "judge").json([{"role": "user", "content": "JSON"}], Out, max_repairs=1)
    assert PLAIN_KEY[:6] not in str(info.value) and "no valid JSON after 1 repair" in str(info.value)
    from engine.store.texts import request_of, response_of

    stored = [json.dumps([request_of(store, row["id"]), response_of(store, row["id"])], ensure_ascii=False)
              + row["params"] for row in store.query("SELECT id, params FROM llm_calls")]
    assert any("my key is" in s for s in stored)  # the repair re-ask quotes the reply, redacted
    assert all(PLAIN_KEY[:6] not in s for s in stored)
    assert all(PLAIN_KEY[:6] not in r["body"] for r in store.query("SELECT body FROM texts"))


async def test_a_streamed_answer_with_the_key_reaches_on_token_redacted(store, fake_openai, monkeypatch):
    monkeypatch.setenv("VIVA_T_KEY", PLAIN_KEY)
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", api_key_env="VIVA_T_KEY", timeout=5)
    fake_openai.default = f"Here it is: {PLAIN_KEY} enjoy"
    pieces: list[str] = []
    result = await LLMClient(store, endpoint, "target").chat([{"role": "user", "content": "key?"}], stream=True,
                                                             on_token=pieces.append)
    assert result.text == "Here it is: [REDACTED] enjoy" == "".join(pieces)
    cached = await LLMClient(store, endpoint, "target").chat([{"role": "user", "content": "key?"}])
    assert cached.cached and cached.text == result.text  # the cache answers what a fresh call returned


def test_plan_run_refuses_a_key_as_api_key_env_before_writing_anything(home, tmp_path, monkeypatch):
    from engine.api import Engine, RunRequest
    from tests.engine.interview_fixtures import make_bench

    (tmp_path / "echo_target.py").write_text("class Echo:\n    def reply(self, messages):\n        return 'ok'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    engine = Engine.open(home)
    make_bench(engine.runtime.store)
    request = RunRequest(bench="oxy", targets=["python:echo_target:Echo"], kernel="offline", policy="threshold")
    assert engine.plan_run(request) == 1  # the target and kernel are fine
    with pytest.raises(ConfigError) as info:  # no endpoint would ever read it: python target, offline kernel
        engine.plan_run(RunRequest(**{**request.__dict__, "api_key_env": PLAIN_KEY}))
    assert PLAIN_KEY not in str(info.value)
    assert engine.runtime.store.one("SELECT COUNT(*) AS n FROM runs")["n"] == 1
    engine.close()
