"""What a turn costs (docs/turn-cost.md): every LLM call recorded with its purpose, at most one call per
purpose a turn needs, SQL statements per turn flat in the session's length, and the caches that make it
so changing no question, verdict or score (real client, fake server over HTTP, real SQLite and ONNX)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from engine.config import Config
from engine.interview.overrides import override_verdict
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.interview.session import Session
from engine.knowledge.embed import length_batches
from engine.metrics.breakdown import calls_by_purpose
from engine.report.model import build_run_report, run_document
from engine.runtime import Runtime
from engine.store import Store
from engine.store.texts import fill_summaries
from tests.engine.interview_fixtures import make_bench, script_llm_kernel, script_target_only


@pytest.fixture
def runtime(home, endpoint):
    rt = Runtime(home=home, config=Config(kernel=endpoint))
    yield rt
    rt.store.close()


def _target(fake) -> str:
    return f"openai:fake-target@{fake.base_url}"


async def _run(runtime, fake, kernel: str, turns: int, policy: str = "onnx") -> int:
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[_target(fake)], kernel=kernel, policy=policy,
                                          turns=turns))
    errors = await execute_run(runtime, run_id)
    assert not any(errors.values()), errors
    return run_id


def _transcript(store, sid: int) -> list[dict]:
    """Every question, answer, score, Δs, cos, summary and verdict of a session, as stored."""
    out = []
    for t in fill_summaries(store, store.query("SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (sid,))):
        verdicts = [dict(v) for v in store.query(
            "SELECT cid, met, in_answer, source, rationale FROM verdicts WHERE turn_id = ? ORDER BY id", (t["id"],))]
        out.append({k: t[k] for k in ("idx", "question", "answer", "action", "state", "probs", "summary", "score",
                                      "delta", "cos", "meta")} | {"verdicts": verdicts})
    return out


async def test_every_call_has_its_purpose_and_a_turn_makes_one_per_purpose(runtime, fake_openai):
    """Against a well-behaved server: each turn one answer and one judge call, each later turn one question,
    one ratings call a session, no repair; the run report counts them by purpose from the store."""
    script_llm_kernel(fake_openai)
    make_bench(runtime.store)
    run_id = await _run(runtime, fake_openai, "config", 6)
    sid = run_sessions(runtime, run_id)[0]
    purposes = Counter(r["purpose"] for r in runtime.store.query(
        "SELECT purpose FROM llm_calls WHERE session_id = ?", (sid,)))
    actions = Counter(r["action"] for r in runtime.store.query(
        "SELECT action FROM turns WHERE session_id = ? AND idx > 0", (sid,)))
    assert purposes == Counter({"answer": 6, "judge": 6, "ratings": 1,
                                **{f"{a} question": n for a, n in actions.items()}})
    assert not any(p.endswith("repair") for p in purposes)
    rows = {(c["role"], c["purpose"]): c for c in run_document(runtime.store, run_id)["calls"]}
    assert rows[("target", "answer")]["calls"] == 6 and rows[("target", "answer")]["per_turn"] == 1.0
    assert rows[("judge", "judge")]["calls"] == 6 and rows[("judge", "ratings")]["calls"] == 1
    assert sum(c["calls"] for c in rows.values()) == sum(purposes.values())
    section = build_run_report(runtime.store, run_id).section("calls")
    assert [r[1] for r in section.rows] == [c["purpose"] for c in calls_by_purpose(runtime.store, [sid])]


async def test_a_repair_is_counted_as_its_own_purpose(runtime, fake_openai):
    """A kernel that repeats its question: the repairs are recorded as such, not as questions."""
    fake_openai.rule("a FOLLOW-UP", json.dumps({"question": "What else do you know about oxygen?"}))
    fake_openai.rule("a CHALLENGE", json.dumps({"question": "What else do you know about oxygen?"}))
    script_llm_kernel(fake_openai)  # (the rules above come first)
    make_bench(runtime.store)
    run_id = await _run(runtime, fake_openai, "config", 4, policy="threshold")
    sid = run_sessions(runtime, run_id)[0]
    purposes = Counter(r["purpose"] for r in runtime.store.query(
        "SELECT purpose FROM llm_calls WHERE session_id = ?", (sid,)))
    repairs = sum(n for p, n in purposes.items() if p.endswith("question repair"))
    questions = sum(n for p, n in purposes.items() if p.endswith("question"))
    # turn 1's question is new; every later one repeats it, and so does its repair: one repair (a second would
    # get the same reply), then the offline question stands in
    assert questions == 3 and repairs == 2


def _count_statements(runtime) -> list[int]:
    """Count the SQL statements the engine sends from now on (a trigger's not counted); returns the count as
    each ``turn.started`` event was written (filled as the session runs)."""
    counts = {"sql": 0}
    starts: list[int] = []
    last = [""]

    def trace(sql: str) -> None:
        if sql != last[0]:  # sqlite traces a trigger's statements as their outer statement again
            counts["sql"] += 1
        last[0] = sql
        if sql.startswith("INSERT INTO events") and "'turn.started'" in sql:
            starts.append(counts["sql"])

    runtime.store.conn.set_trace_callback(trace)
    return starts


async def test_sql_per_turn_does_not_grow_with_the_session(runtime, fake_openai):
    """Turn 20 sends no more statements than turn 3 (counts, not time: exact on any machine)."""
    script_llm_kernel(fake_openai)
    make_bench(runtime.store)
    starts = _count_statements(runtime)
    await _run(runtime, fake_openai, "config", 24)
    runtime.store.conn.set_trace_callback(None)
    per_turn = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    early, late = sorted(per_turn[2:7])[2], sorted(per_turn[18:23])[2]
    assert late <= early + 2, per_turn
    assert early < 60, per_turn


async def test_each_answer_is_read_in_the_criteria_words_once(runtime, fake_openai):
    """The offline judge's summary re-reads every earlier answer each turn; reading its amounts and
    initialisms in the criteria's words is kept, so a session reads each text once (counts: on any machine)."""
    from engine.judge.freetext import _read_in_claims

    script_target_only(fake_openai)
    make_bench(runtime.store)
    _read_in_claims.cache_clear()
    turns = 16
    await _run(runtime, fake_openai, "offline", turns)
    info = _read_in_claims.cache_info()
    # without the cache a turn would read the whole summary again: about turns * (turns + 1) / 2 texts
    assert info.misses <= 3 * turns < turns * (turns + 1) // 2, info
    assert info.hits > info.misses, info


async def test_the_caches_change_no_question_verdict_or_score(runtime, fake_openai, monkeypatch):
    """The same offline sessions with the turn cache and the protocol's verdict caches defeated (every read
    from the store, as before they existed) ask, judge and score exactly alike."""
    script_target_only(fake_openai)
    make_bench(runtime.store, n_items=2)
    first = await _run(runtime, fake_openai, "offline", 10)
    cached = [_transcript(runtime.store, sid) for sid in run_sessions(runtime, first)]

    original = Session.turns

    def uncached(self, check=True):
        self._turns = None
        return original(self, check)

    monkeypatch.setattr(Session, "turns", uncached)
    monkeypatch.setattr("engine.interview.protocols.adaptive.Adaptive._fresh",
                        lambda self: (self._earned.clear(), self._met.clear()))
    second = await _run(runtime, fake_openai, "offline", 10)
    plain = [_transcript(runtime.store, sid) for sid in run_sessions(runtime, second)]
    assert cached == plain
    assert any(t["action"] == "challenge" for s in cached for t in s)


async def test_an_override_made_elsewhere_reaches_the_kept_turns(runtime, fake_openai):
    """Session.turns keeps its copy until the session's events say the turns changed elsewhere."""
    script_llm_kernel(fake_openai)
    make_bench(runtime.store)
    run_id = await _run(runtime, fake_openai, "config", 3, policy="threshold")
    sid = run_sessions(runtime, run_id)[0]
    session = Session(runtime.store, sid)
    before = session.turns()
    assert session.turns() == before and session.reads == 1
    other = Store(runtime.store.path)  # another connection, as the app's would be
    try:
        override_verdict(other, sid, 1, "c1", False, note="not said in this answer")
    finally:
        other.close()
    after = session.turns()
    assert session.reads == 2
    fresh = [t for t in Session(runtime.store, sid).turns()]
    assert after == fresh and after[1].score != before[1].score


async def test_a_written_turn_is_kept_as_reading_it_back_gives_it(runtime, fake_openai):
    """The copy :meth:`Session.turns` keeps after the session's own writes equals a fresh read."""
    script_llm_kernel(fake_openai)
    make_bench(runtime.store)
    run_id = await _run(runtime, fake_openai, "config", 2, policy="threshold")
    sid = run_sessions(runtime, run_id)[0]
    session = Session(runtime.store, sid)
    session.turns()
    turn = session.add_turn(2, "What colour is liquid oxygen?", "follow-up", "human")
    session.record_answer(turn, "Pale blue.", 12, 3, 4, 0)  # ints where the columns are REAL
    kept = session.turns()
    assert kept == Session(runtime.store, sid).turns()
    assert isinstance(kept[-1].latency_ms, float) and isinstance(kept[-1].cost, float)


def test_length_batches_keep_short_texts_apart_from_long_ones():
    assert length_batches([5, 6, 7, 8], 8) == [[0, 1, 2, 3]]
    assert length_batches([5, 6, 7, 200], 8) == [[0, 1, 2], [3]]
    assert length_batches([5, 5, 5, 5, 5], 2) == [[0, 1], [2, 3], [4]]
    assert length_batches([], 4) == []


@pytest.fixture(scope="module")
def embedder():
    from engine.knowledge.embed import get_embedder

    return get_embedder()


def test_batching_by_length_gives_the_vectors_of_texts_embedded_one_by_one(embedder):
    """Mixed lengths (a word, sentences, a text past the window): batched as a turn's are, each vector is
    the one it has alone, bit for bit."""
    texts = ["blue", "Liquid oxygen is pale blue.", "Plants release oxygen through photosynthesis. " * 3,
             "Oxygen is the most abundant element in the Earth's crust. " * 40, "gas",
             "What do you know about oxygen? Oxygen is reactive. It supports combustion."]
    together = embedder.embed(texts)
    for i, text in enumerate(texts):
        assert np.array_equal(embedder.embed([text])[0], together[i])


async def _gold_session(runtime, fake) -> int:
    from tests.engine.test_gold_llm import bench as gold_bench
    from tests.engine.test_gold_llm import script as gold_script

    gold_script(fake, ["Doctors do.", "I am sure: doctors.", "Yes, doctors do.", "Actually, nurses do.",
                       "Nurses do, I said."])
    gold_bench(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="care", targets=[_target(fake)], kernel="config",
                                          policy="always-challenge", turns=5))
    errors = await execute_run(runtime, run_id)
    assert not any(errors.values()), errors
    return run_sessions(runtime, run_id)[0]


async def test_the_gold_judge_judges_each_reply_once(runtime, fake_openai):
    """Each turn judges the gold criterion's whole span of challenges again; a reply judged at an earlier
    turn is not asked (nor recorded as a cached call) again: one gold call per turn, not one per turn so far."""
    sid = await _gold_session(runtime, fake_openai)
    gold_calls = runtime.store.one("SELECT COUNT(*) AS n FROM llm_calls WHERE session_id = ? AND purpose = 'gold judge'",
                                   (sid,))["n"]
    assert gold_calls == 5


async def test_the_gold_judges_memo_changes_no_verdict(home, fake_openai, monkeypatch, endpoint):
    """The same gold session with the memo defeated (every reply of the span judged again, answered by the
    response cache): the same verdicts and scores."""
    import engine.judge.gold_llm as gold_llm

    def run_in(path):
        return Runtime(home=path, config=Config(kernel=endpoint))

    first = run_in(home / "a")
    try:
        with_memo = _transcript(first.store, await _gold_session(first, fake_openai))
    finally:
        first.store.close()
    fake_openai.reset()
    original = gold_llm._judged
    monkeypatch.setattr(gold_llm, "_judged", lambda memo, *args: original(None, *args))
    second = run_in(home / "b")
    try:
        sid = await _gold_session(second, fake_openai)
        without = _transcript(second.store, sid)
        repeated = second.store.one("SELECT COUNT(*) AS n FROM llm_calls WHERE session_id = ? AND "
                                    "purpose = 'gold judge'", (sid,))["n"]
    finally:
        second.store.close()
    assert repeated == 1 + 2 + 3 + 4 + 5  # (answered by the response cache but recorded, every turn)
    assert with_memo == without


async def test_the_gold_check_and_the_verdicts_are_sent_at_once(runtime, fake_openai):
    """The gold judge's reply waits (up to 5 s) for the judge's request of the same turn to arrive: it does
    when the two calls are sent at once, and only then (sent one after the other, the judge's request
    would come after the gold reply)."""
    import threading

    judge_arrived = threading.Event()
    waited: list[bool] = []

    def gold(body):
        waited.append(judge_arrived.wait(5))
        relation = ', "relation": "keeps"' if "Earlier reply:" in body["messages"][-1]["content"] else ""
        return '{"reason": "doctors are physicians", "correct": true' + relation + "}"

    def judge(body):
        judge_arrived.set()
        return json.dumps({"verdicts": [{"id": "c2", "rationale": "not stated", "met": False, "in_answer": False}],
                           "summary": "The candidate named who treats patients."})

    fake_openai.rule("against accepted answers", gold)
    fake_openai.rule("judge of an oral examination", judge)
    await _gold_session(runtime, fake_openai)
    assert waited and waited[0] is True


_IMPORTS_SCRIPT = """
import asyncio, json, sys, tempfile
from pathlib import Path
from engine.config import Config, ModelConfig
from engine.interview.pool import prepare
from engine.interview.run import RunRequest, execute_run, plan_run
from engine.runtime import Runtime
from tests.engine.interview_fixtures import make_bench, script_llm_kernel
from tests.fakes.openai_server import FakeOpenAI

with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
    script_llm_kernel(fake)
    endpoint = ModelConfig(base_url=fake.base_url, model="fake-model", timeout=10, max_retries=0)
    runtime = Runtime(home=Path(tmp), config=Config(kernel=endpoint))
    make_bench(runtime.store)
    prepare()
    before = set(sys.modules)
    for kernel in ("config", "offline"):
        run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[f"openai:fake-target@{fake.base_url}"],
                                              kernel=kernel, policy="onnx", turns=3))
        errors = asyncio.run(execute_run(runtime, run_id))
        assert not any(errors.values()), errors
    print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_a_prepared_process_imports_nothing_more_in_its_sessions():
    """``engine.interview.pool.prepare`` loads what a session imports on its way, so 64 sessions started at
    once do not each wait for the process's imports in their first turn (docs/turn-cost.md, round five).
    In a fresh interpreter: after it, an LLM-kernel and an offline session import no module of viva's nor of
    the SDK's HTTP stack."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", _IMPORTS_SCRIPT], capture_output=True, text=True, cwd=root,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    ours = [m for m in loaded if m.split(".")[0] in ("engine", "openai", "httpx2", "httpcore2", "h11", "anyio")]
    assert ours == [], ours
