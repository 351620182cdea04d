"""The embedding service (engine.knowledge.embed.EmbeddingService): cached and coalesced vectors are the
direct ones bit for bit, and a session run through it is the session run without it.

Real parts: the ONNX embedder, SQLite, the fake OpenAI server through the real openai client.
"""

from __future__ import annotations

import asyncio
import random
import threading

import numpy as np
import pytest

from engine.config import Config
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.knowledge.embed import CACHE_ENV, EmbeddingService, get_embedder, get_embedding_service
from engine.runtime import Runtime
from engine.store.texts import fill_summaries
from tests.engine.interview_fixtures import ANSWERS, is_target, make_bench

WORDS = ("Oxygen is the most abundant element in the Earth's crust , plants release oxygen through "
         "photosynthesis. What can you tell me about 氧气 liquid (pale) blue? naïve café — 12.5% "
         "e-mail don't").split()


def _texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    context = " ".join(rng.choice(WORDS) for _ in range(600))  # far past the 256-token window
    out = []
    for _ in range(6):
        out.append(f"{context} {' '.join(rng.choice(WORDS) for _ in range(rng.randint(1, 20)))}")
        out.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 300))))
    return out + ["", "   ", out[0]]


@pytest.fixture(scope="module")
def embedder():
    return get_embedder()


def test_cut_keeps_the_encoders_input_ids(embedder):
    """A long text's key is a prefix whose tokens are the text's first tokens, filling the window."""
    service = EmbeddingService(embedder)
    limit = embedder.max_length
    cut = 0
    for text in _texts(1):
        _, short = service.key_of(text)
        assert text.startswith(short)
        full = embedder._encode_ids([text])[0]
        mine = embedder._encode_ids([short])[0]
        assert mine == full  # truncation leaves the same ids
        cut += short != text
        if short != text:
            assert len(full) == limit
    assert cut >= 6


def test_cached_and_coalesced_vectors_equal_direct_ones(embedder):
    texts = _texts(2)
    direct = embedder.embed(texts)
    service = EmbeddingService(embedder)
    first = service.embed(texts)
    again = service.embed(list(reversed(texts)))[::-1]
    assert np.array_equal(first, direct) and np.array_equal(again, direct)
    stats = service.stats()
    # the 6 long texts share one window-filling prefix: one vector for all of them
    assert stats["embedded"] == len({service.key_of(t)[0] for t in texts}) <= len(texts) - 5
    assert stats["hits"] >= len(texts)
    # single texts embedded alone are the same as in the batch (the encoder is batch-invariant)
    for i in (1, 3, 5):
        assert np.array_equal(embedder.embed([texts[i]])[0], direct[i])


def test_concurrent_callers_share_runs(embedder):
    """Requests from many threads and from the event loop are coalesced; each gets its own vectors."""
    service = EmbeddingService(embedder, window=0.05, max_batch=512)
    groups = [[f"session {k} says sentence {j} about oxygen." for j in range(4)] for k in range(8)]
    expected = [embedder.embed(g) for g in groups]
    results: dict[int, np.ndarray] = {}
    barrier = threading.Barrier(4)

    def worker(k: int) -> None:
        barrier.wait()
        results[k] = service.embed(groups[k])

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()

    async def from_loop() -> list[np.ndarray]:
        return await asyncio.gather(*(service.aembed(groups[k]) for k in range(4, 8)))

    for k, vectors in zip(range(4, 8), asyncio.run(from_loop()), strict=True):
        results[k] = vectors
    for t in threads:
        t.join()
    for k in range(8):
        assert np.array_equal(results[k], expected[k])
    assert service.stats()["runs"] < 8  # at least two callers shared one ONNX run
    assert service.stats()["embedded"] == 32


def test_pass_through_when_disabled(embedder):
    service = EmbeddingService(embedder, enabled=False)
    texts = _texts(3)[:4]
    assert np.array_equal(service.embed(texts), embedder.embed(texts))
    assert service.stats()["hits"] == 0 and service.stats()["embedded"] == 4 and service.stats()["cached"] == 0


def _long_answer(body) -> str:
    """Answers long enough that the running summary passes the encoder's window after two turns."""
    t = sum(1 for m in body["messages"] if m["role"] == "user") - 1
    # words, not numbers, tell the sentences apart: a reply restating a sentence with another number is read
    # as a switched value under challenge (engine.judge.offline.switches_value), which would cut the summary
    names = ("amber", "birch", "cedar", "dune", "ember", "fjord", "grove", "heath", "islet", "juniper", "kelp", "larch")
    filler = " ".join(f"Sentence {names[t % len(names)]} {names[k]} says that the oxygen element, number eight in the "
                      f"periodic table of the elements, has the measured property {names[(k * t) % len(names)]} in "
                      "every one of the laboratories." for k in range(3))
    return f"{ANSWERS[t % len(ANSWERS)]} {filler}"


def _timeless(value):
    """A payload without its wall-clock figures (latencies differ from run to run)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in ("latency_ms", "mean_latency_ms")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


async def _run_session(home, fake, monkeypatch, cached: bool):
    monkeypatch.setenv(CACHE_ENV, "1" if cached else "0")
    runtime = Runtime(home=home, config=Config(), use_cache=False)
    make_bench(runtime.store, name="b")
    target = f"openai:fake-target@{fake.base_url}"
    run_id = plan_run(runtime, RunRequest(bench="b", targets=[target], kernel="offline", policy="onnx", turns=4,
                                          seed=7))
    assert await execute_run(runtime, run_id) == {run_sessions(runtime, run_id)[0]: None}
    sid = run_sessions(runtime, run_id)[0]
    store = runtime.store
    events: list = []
    streamed: dict[int, str] = {}  # answer.delta pieces depend on timing: compared joined, per turn
    for e in store.events(0, sid):
        if e.kind == "answer.delta":
            streamed[e.payload["turn"]] = streamed.get(e.payload["turn"], "") + e.payload["text"]
            continue
        events.append((e.kind, _timeless(e.payload)))
    turns = fill_summaries(store, store.query(
        "SELECT idx, question, answer, action, actor, state, probs, score, delta, cos, summary, summary_text "
        "FROM turns WHERE session_id = ? ORDER BY idx", (sid,)))
    verdicts = store.query("SELECT t.idx, v.cid, v.met, v.in_answer, v.rationale FROM verdicts v JOIN turns t "
                           "ON t.id = v.turn_id WHERE t.session_id = ? ORDER BY v.id", (sid,))
    runtime.close()
    return events + [streamed], turns, verdicts


async def test_session_is_unchanged_by_the_cache(tmp_path, fake_openai, monkeypatch):
    """The same session (offline kernel, onnx policy, seeded) with the service's cache and without it:
    the same events, turns (scores, cos_t, summaries, policy states) and verdicts."""
    fake_openai.rule(is_target, _long_answer)
    plain = await _run_session(tmp_path / "plain", fake_openai, monkeypatch, cached=False)
    cached = await _run_session(tmp_path / "cached", fake_openai, monkeypatch, cached=True)
    service = get_embedding_service()
    assert service.enabled and service.stats()["hits"] > 0
    assert cached[1] == plain[1]
    assert cached[2] == plain[2]
    assert cached[0] == plain[0]
    assert any(len(t["summary"] or "") > 6 * 256 for t in cached[1])  # the cut was exercised
